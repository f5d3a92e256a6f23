// A kubeconfig file's text, through the same loader `--kubeconfig` uses.
// Properties: no crash, no exception escaping: a clear error or a connection config.

#include "protocol/kube_config.hpp"
#include "tests/fuzz/fuzz_input.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

using namespace kinformer;

namespace {

// One scratch file per process, rewritten for every input and removed at exit. (A plain array:
// it outlives the exit handler that removes it.)
char scratch_name[] = "/tmp/kinformer-fuzz-kubeconfig-XXXXXX";

const char* scratch_path() {
  static const bool created = [] {
    int fd = ::mkstemp(scratch_name);
    if (fd < 0)
      fuzz::violated("cannot create a scratch file");
    ::close(fd);
    std::atexit([] { std::remove(scratch_name); });
    return true;
  }();
  (void)created;
  return scratch_name;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const char* path = scratch_path();
  std::FILE* file = std::fopen(path, "wb");
  if (!file)
    fuzz::violated("cannot write the scratch file");
  std::fwrite(data, 1, size, file);
  std::fclose(file);
  auto config = load_kubeconfig(path, {});
  if (!config)
    fuzz::require(!config.err().message.empty(), "an error without a message");
  return 0;
}
