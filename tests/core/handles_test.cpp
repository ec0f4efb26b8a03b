// The handle registry and each thread's cache of its last successful check:
// a cached handle stops being valid as soon as it is unregistered, on every
// thread, and a cached check never answers for another type.
#include <thread>

#include "sg_test_util.h"

extern "C" {
#include "core/handles.h"
}

namespace {

struct Object {
  int unused = 0;
};

TEST(Handles, ACachedCheckEndsWithTheUnregistration) {
  Object o;
  ASSERT_EQ(sg__handle_register(&o, SG__HANDLE_EXEC, "test"), SG_OK);
  EXPECT_TRUE(sg__handle_valid(&o, SG__HANDLE_EXEC));
  EXPECT_TRUE(sg__handle_valid(&o, SG__HANDLE_EXEC)); // from the cache
  EXPECT_FALSE(sg__handle_valid(&o, SG__HANDLE_GRAPH));
  sg__handle_unregister(&o);
  EXPECT_FALSE(sg__handle_valid(&o, SG__HANDLE_EXEC));
  EXPECT_EQ(sg__handle_check(&o, SG__HANDLE_EXEC, "f", "exec"), SG_ERR_INVALID_HANDLE);
}

TEST(Handles, ReRegisteredAsAnotherTypeIsCheckedAsThatType) {
  Object o;
  ASSERT_EQ(sg__handle_register(&o, SG__HANDLE_PLAN, "test"), SG_OK);
  EXPECT_TRUE(sg__handle_valid(&o, SG__HANDLE_PLAN));
  sg__handle_unregister(&o);
  ASSERT_EQ(sg__handle_register(&o, SG__HANDLE_POOL, "test"), SG_OK);
  EXPECT_FALSE(sg__handle_valid(&o, SG__HANDLE_PLAN));
  EXPECT_TRUE(sg__handle_valid(&o, SG__HANDLE_POOL));
  sg__handle_unregister(&o);
}

TEST(Handles, AnotherThreadsUnregistrationEndsThisThreadsCachedCheck) {
  Object o, other;
  ASSERT_EQ(sg__handle_register(&o, SG__HANDLE_EXEC, "test"), SG_OK);
  ASSERT_EQ(sg__handle_register(&other, SG__HANDLE_EXEC, "test"), SG_OK);
  EXPECT_TRUE(sg__handle_valid(&o, SG__HANDLE_EXEC)); // cached on this thread
  std::thread([&] {
    EXPECT_TRUE(sg__handle_valid(&o, SG__HANDLE_EXEC));
    sg__handle_unregister(&o);
  }).join();
  EXPECT_FALSE(sg__handle_valid(&o, SG__HANDLE_EXEC));
  // Unregistering another handle leaves this one valid (found again under the lock).
  ASSERT_EQ(sg__handle_register(&o, SG__HANDLE_EXEC, "test"), SG_OK);
  EXPECT_TRUE(sg__handle_valid(&o, SG__HANDLE_EXEC));
  sg__handle_unregister(&other);
  EXPECT_TRUE(sg__handle_valid(&o, SG__HANDLE_EXEC));
  sg__handle_unregister(&o);
}

}  // namespace
