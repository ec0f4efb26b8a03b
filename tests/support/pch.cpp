// The program the tests' precompiled header is made with (tests/CMakeLists.txt):
// it does nothing, and is never run.
int main() { return 0; }
