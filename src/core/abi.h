/* Internal: structs crossing the public API with the size the caller's
 * compiler gave them (docs/abi.md).
 *
 * Every public call taking a struct the caller fills, or one the library
 * fills for the caller, is exported as <name>_sized with the struct's size
 * beside the pointer; the header's inline function of the plain name passes
 * sizeof, so a program records, in its own binary, the layout it was
 * compiled with. Fields are only ever added at the end: the library reads
 * a shorter (older) struct with the new fields zero, which means "as
 * before", and writes only what a shorter struct holds. A longer (newer)
 * struct is accepted when every byte this library does not know is zero. */
#ifndef SG_CORE_ABI_H
#define SG_CORE_ABI_H

#include <stddef.h>

#include "streamgraph/status.h"

/* The size of a struct's first published layout, whose last field was
 * `last`: what the oldest binary passes. Fixed by the field's name, so it
 * stays right when fields are added after it. */
#define SG__ABI_FIRST(type, last)                                                       \
  ((offsetof(type, last) + sizeof(((type *)0)->last) + _Alignof(type) - 1) /            \
   _Alignof(type) * _Alignof(type))

/* The caller's struct `caller` (`size` bytes) as this library lays it out
 * (`local_size` bytes): *out is `caller` itself when the sizes agree, else
 * `local`, holding what both layouts have and zero in the rest. NULL stays
 * NULL (the call then reports it as before). SG_ERR_INVALID_ARGUMENT when
 * `size` is below `first` (no binary ever had such a struct), and
 * SG_ERR_UNSUPPORTED when a newer layout sets a field this library does not
 * know; messages name `fn` and `what`. */
sg_status sg__abi_in(const void *caller, size_t size, size_t first, void *local,
                     size_t local_size, const char *fn, const char *what, const void **out);
/* SG_OK when a struct the library fills (`size` bytes, `caller`) is at least
 * its first layout; else SG_ERR_INVALID_ARGUMENT naming `fn` and `what`. */
sg_status sg__abi_out_check(size_t size, size_t first, const char *fn, const char *what);
/* Copies `local` into the caller's struct of `size` bytes: the fields it has
 * room for, zero beyond this library's layout. */
void sg__abi_out(void *caller, size_t size, const void *local, size_t local_size);

#endif
