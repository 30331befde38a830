// Linked into every test binary (sb_test): no test records into the user's run store
// (docs/store.md), also when a binary is run by hand outside ctest, which sets the same
// variable. A test of the store names its own (--store, or SERVEBENCH_STORE in a child's
// environment); an explicit SERVEBENCH_STORE in the environment is kept.
#include <cstdlib>

namespace {

[[maybe_unused]] const bool kNoUserStore = [] {
  setenv("SERVEBENCH_STORE", "off", /*overwrite=*/0);
  return true;
}();

}  // namespace
