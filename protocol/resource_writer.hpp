#pragma once
// The write verbs of client-go's dynamic client over api_client: create, update, patch (merge,
// JSON and strategic merge) and delete, on an object or its status subresource. Blocking calls
// for code that is not on the client's I/O thread (a reconciler in a worker actor).
//
// Failures the caller branches on have their own codes: errc::not_found (404),
// errc::conflict (409 Conflict: the object changed since it was read; read it again),
// errc::already_exists (409 AlreadyExists). Any other refusal is errc::status with the
// server's Status message; transport failures keep the client's codes (io, tls, timeout).

#include "protocol/gvk.hpp"
#include "protocol/http/api_client.hpp"
#include "protocol/object.hpp"
#include "protocol/result.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace kinformer {

// Where an object lives: its resource and namespace ("" for a cluster-scoped resource).
struct resource_location {
  group_version_resource resource;
  std::string namespace_;
};

enum class patch_type { merge, json, strategic_merge };
const char* content_type_of(patch_type type) noexcept;

struct write_options {
  bool dry_run = false;      // dryRun=All: validated and answered, not persisted
  std::string field_manager; // fieldManager: who owns the fields written
};

struct apply_options {
  std::string field_manager; // required: who owns the fields applied
  bool force = false;        // take over fields other managers own instead of a conflict
  bool dry_run = false;
};

struct delete_options {
  // Preconditions: the delete fails with errc::conflict unless the object still has them.
  std::string uid;
  std::string resource_version;
  std::string propagation_policy; // "Foreground", "Background" or "Orphan"; "" = the default
  std::optional<std::int64_t> grace_period_seconds;
  bool dry_run = false;
};

class resource_writer {
public:
  explicit resource_writer(std::shared_ptr<api_client> client);

  // POST: `json` is the whole object; the answer is the object as stored.
  result<object_ptr> create(const resource_location& where, std::string_view json,
                            const write_options& options = {}) const;
  // PUT: `json` replaces the object `name` (a metadata.resourceVersion in it makes the update
  // conditional: errc::conflict when the object changed since).
  result<object_ptr> update(const resource_location& where, std::string_view name,
                            std::string_view json, const write_options& options = {}) const;
  // PUT to the status subresource: only .status is taken from `json`.
  result<object_ptr> update_status(const resource_location& where, std::string_view name,
                                   std::string_view json, const write_options& options = {}) const;
  result<object_ptr> patch(const resource_location& where, std::string_view name, patch_type type,
                           std::string_view patch, const write_options& options = {}) const;
  result<object_ptr> patch_status(const resource_location& where, std::string_view name,
                                  patch_type type, std::string_view patch,
                                  const write_options& options = {}) const;
  // Server-side apply (PATCH application/apply-patch+yaml, the configuration sent as JSON):
  // `json` holds the fields this manager wants (apiVersion, kind, metadata.name and what it
  // manages); the server merges them, removes what this manager applied before and no longer
  // does, and creates the object when it is absent. A field another manager owns with another
  // value is errc::conflict, its message naming each one, unless `force`.
  result<object_ptr> apply(const resource_location& where, std::string_view name,
                           std::string_view json, const apply_options& options) const;
  // DELETE; succeeds when the server accepted the deletion (it may still be finalising).
  status_result remove(const resource_location& where, std::string_view name,
                       const delete_options& options = {}) const;

  // The request path of an object (or of the collection when `name` is empty), below the
  // server's base path: "/api/v1/namespaces/ns/configmaps/name".
  static std::string object_path(const resource_location& where, std::string_view name,
                                 std::string_view subresource = {});

private:
  result<object_ptr> send_object(api_verb verb, std::string target, std::string content_type,
                                 std::string body) const;
  std::shared_ptr<api_client> client_;
};

} // namespace kinformer
