#include "protocol/object_scan.hpp"

namespace kinformer {

// One implementation of the scans per simdjson kernel (object_scan_kernel.ipp).
#define KINFORMER_DECLARE_SCAN_KERNEL(ns)                                                          \
  namespace ns {                                                                                   \
  status_result scan_object(std::string_view, object_scan&);                                       \
  status_result scan_watch_line(std::string_view, watch_line_scan&);                               \
  std::optional<std::string> scan_field(std::string_view, std::string_view);                       \
  }
KINFORMER_DECLARE_SCAN_KERNEL(generic_kernel)
#if defined(KINFORMER_SCAN_HASWELL)
KINFORMER_DECLARE_SCAN_KERNEL(haswell_kernel)
#endif

namespace {

bool use_haswell() {
#if defined(KINFORMER_SCAN_HASWELL)
  static const bool supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
                                __builtin_cpu_supports("pclmul");
  return supported;
#else
  return false;
#endif
}

} // namespace

std::string_view padded_copy(std::string& buffer, std::string_view text) {
  buffer.assign(text);
  buffer.append(scan_padding, ' ');
  return {buffer.data(), text.size()};
}

void object_scan::clear() {
  kind = {};
  api_version = {};
  namespace_ = {};
  name = {};
  uid = {};
  resource_version = {};
  deletion_timestamp = {};
  generation = 0;
  labels.clear();
  annotations.clear();
  owner_references.clear();
  object = {};
  metadata = {};
  has_members = false;
  type_members = false;
  escaped_bytes = 0;
}

status_result scan_object(std::string_view padded_text, object_scan& out) {
#if defined(KINFORMER_SCAN_HASWELL)
  if (use_haswell())
    return haswell_kernel::scan_object(padded_text, out);
#endif
  return generic_kernel::scan_object(padded_text, out);
}

status_result scan_watch_line(std::string_view padded_line, watch_line_scan& out) {
#if defined(KINFORMER_SCAN_HASWELL)
  if (use_haswell())
    return haswell_kernel::scan_watch_line(padded_line, out);
#endif
  return generic_kernel::scan_watch_line(padded_line, out);
}

std::optional<std::string> scan_field(std::string_view padded_text, std::string_view dotted_path) {
#if defined(KINFORMER_SCAN_HASWELL)
  if (use_haswell())
    return haswell_kernel::scan_field(padded_text, dotted_path);
#endif
  return generic_kernel::scan_field(padded_text, dotted_path);
}

} // namespace kinformer
