#include "protocol/object_scan.hpp"
#include "protocol/object_scan_structural.hpp"
#include "protocol/object_scan_validate.hpp"

namespace kinformer {

// One implementation of the scans per simdjson kernel (object_scan_kernel.ipp).
#define KINFORMER_DECLARE_SCAN_KERNEL(ns)                                                          \
  namespace ns {                                                                                   \
  status_result walk_object(std::string_view, object_scan&);                                       \
  status_result walk_watch_line(std::string_view, watch_line_scan&);                               \
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
  managed_fields = {};
  managed_fields_members = 0;
  has_members = false;
  type_members = false;
  escaped_bytes = 0;
}

// Calls the kernel's `call` (object_scan_kernel.ipp) for this CPU.
#if defined(KINFORMER_SCAN_HASWELL)
#define KINFORMER_SCAN_WITH(call) (use_haswell() ? haswell_kernel::call : generic_kernel::call)
#else
#define KINFORMER_SCAN_WITH(call) (generic_kernel::call)
#endif

status_result scan_object(std::string_view padded_text, object_scan& out) {
  // A metadata field of the wrong type fails the read: the full walk then says which.
  if (auto validated = validate_object_fast(padded_text);
      validated && read_structural_object(padded_text, *validated, out))
    return ok_v;
  return KINFORMER_SCAN_WITH(walk_object(padded_text, out));
}

status_result scan_object_walking(std::string_view padded_text, object_scan& out) {
  return KINFORMER_SCAN_WITH(walk_object(padded_text, out));
}

status_result scan_watch_line(std::string_view padded_line, watch_line_scan& out) {
  if (auto structurals = validate_fast(padded_line);
      structurals && read_structural_watch_line(padded_line, *structurals, out))
    return ok_v;
  return KINFORMER_SCAN_WITH(walk_watch_line(padded_line, out));
}

status_result scan_watch_line_walking(std::string_view padded_line, watch_line_scan& out) {
  return KINFORMER_SCAN_WITH(walk_watch_line(padded_line, out));
}

std::optional<std::string> scan_field(std::string_view padded_text, std::string_view dotted_path) {
  return KINFORMER_SCAN_WITH(scan_field(padded_text, dotted_path));
}

#undef KINFORMER_SCAN_WITH

} // namespace kinformer
