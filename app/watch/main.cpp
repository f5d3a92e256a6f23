// kinformer-watch: one informer, one handler actor, every delta printed as a JSON line (or the
// objects themselves, as `kubectl get -w -o json|yaml|name` prints them).
//
//   kinformer-watch [--kubeconfig F] [--context C] [-s URL] [-n NS | -A] [-l SEL] RESOURCE
//
// A reader can follow the whole path here: resolve RESOURCE through discovery, spawn an
// informer (which spawns its reflector), subscribe a handler, print what the handler receives.

#include "actors/actor_system_setup.hpp"
#include "actors/handler.hpp"
#include "actors/informer.hpp"
#include "app/common/allocator_tuning.hpp"
#include "app/common/client_flags.hpp"
#include "app/common/delta_line.hpp"
#include "app/common/object_output.hpp"
#include "app/common/stop_signals.hpp"
#include "protocol/http/api_client.hpp"
#include "protocol/kube_config.hpp"
#include "protocol/rest_mapper.hpp"
#include "protocol/transforms.hpp"

#include <CLI/App.hpp>
#include <CLI/Config.hpp>
#include <CLI/Formatter.hpp>
#include <caf/all.hpp>

#include <cstdio>
#include <iostream>
#include <pthread.h>
#include <string>

using namespace kinformer;

namespace {

const char* description =
    "Runs one informer for RESOURCE (kubectl-style: pods, deployments.apps,\n"
    "widgets.example.com) with one handler actor, and prints each delta it receives as one\n"
    "JSON line:\n"
    "  {\"type\":\"ADDED|UPDATED|DELETED|SYNC\",\"key\":\"ns/name\",\"resourceVersion\":\"...\",\n"
    "   \"initialList\":true|false,\"finalStateUnknown\":true|false}\n"
    "then {\"type\":\"SYNCED\"} once the subscription has synced. With -o json|yaml|name it\n"
    "prints the objects instead, as kubectl get -w -o json|yaml|name does.\n"
    "The connection and namespace follow kubectl: --kubeconfig, else KUBECONFIG, else\n"
    "~/.kube/config, else the pod's service account; -s/--server alone needs no kubeconfig.";

struct arguments {
  client_flags client;
  std::string resource, output;
  bool metadata_only = false, drop_managed_fields = false, streaming = false;
  int compress_objects = 0;   // > 0: --compress-objects, < 0: --no-compress-objects, 0: neither
  unsigned watch_timeout = 0; // seconds; 0: client-go's 5 to 10 minutes
};

int fail(const std::string& message) {
  std::cerr << "kinformer-watch: " << message << "\n";
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  tune_allocator({.max_arenas = 1}); // one arena: the smallest heap (allocator_tuning.hpp)
  arguments args;
  CLI::App app(description, "kinformer-watch");
  add_connection_flags(app, args.client);
  add_selection_flags(app, args.client);
  add_version_flag(app);
  app.add_option("-o,--output", args.output, "json, yaml or name (default: delta lines)");
  app.add_flag("--metadata-only", args.metadata_only, "store PartialObjectMetadata only");
  app.add_flag("--drop-managed-fields", args.drop_managed_fields,
               "drop metadata.managedFields before storing (and printing) each object");
  app.add_flag("--compress-objects,!--no-compress-objects", args.compress_objects,
               "keep each object's text compressed, with a dictionary trained on the first ones "
               "received: less memory, and a decompression for every object printed (default: "
               "with --metadata-only only)");
  app.add_flag("--streaming-list", args.streaming,
               "initial state through a streaming list (KEP-3157)");
  app.add_option("--watch-timeout", args.watch_timeout,
                 "ask the server to end each watch after SECONDS; the informer then resumes from "
                 "its last resourceVersion (default: 300 to 600, drawn as client-go does)");
  app.add_option("RESOURCE", args.resource, "what to watch: pods, deployments.apps, ...")
      ->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit with 0; a bad command line with 2 and the reason.
    if (e.get_exit_code() == 0)
      return app.exit(e);
    return fail(std::string(e.what()) + " (see --help)");
  }

  auto format = parse_output_format(args.output);
  if (!format)
    return fail(format.err().message);
  auto config = resolve_connection(args.client);
  if (!config)
    return fail(config.err().describe());
  auto ns = resolve_namespace(args.client, *config);
  if (!ns)
    return fail(ns.err().message);
  auto labels = label_selector::parse(args.client.selector);
  if (!labels)
    return fail(labels.err().describe());
  auto fields = field_selector::parse(args.client.field_selector);
  if (!fields)
    return fail(fields.err().describe());

  stop_signals stop; // before any thread starts

  auto created = api_client::create(*config);
  if (!created)
    return fail(created.err().describe());
  std::shared_ptr<api_client> client = std::move(created).value();

  rest_mapper mapper([&](const std::string& path) { return client->get_document_sync(path); });
  auto mapping = mapper.resource_for(args.resource);
  if (!mapping)
    return fail(mapping.err().describe());

  informer_config informer;
  informer.resource = mapping->resource;
  informer.kind = mapping->kind.kind;
  informer.scope = mapping->scope;
  // A cluster-scoped kind ignores the namespace, as kubectl does.
  informer.namespace_ = mapping->scope == resource_scope::namespaced ? *ns : std::string();
  informer.labels = *labels;
  informer.fields = *fields;
  informer.metadata_only = args.metadata_only;
  if (args.drop_managed_fields)
    informer.transform = drop_managed_fields();
  if (args.compress_objects != 0)
    informer.compress_objects = args.compress_objects > 0;
  informer.watch.streaming_list = args.streaming;
  if (args.watch_timeout > 0)
    informer.watch.min_watch_timeout = informer.watch.max_watch_timeout =
        std::chrono::seconds(args.watch_timeout);

  caf::actor_system_config cfg;
  configure_actor_system(cfg);
  caf::actor_system system{cfg};
  auto inf = spawn_informer(system, client, informer);

  handler_callbacks callbacks;
  // One write per batch of deltas, not one per line.
  const std::string prefix = name_prefix(mapping->kind.kind, mapping->kind.group);
  callbacks.on_delta = [format = *format, prefix](const delta& d) {
    write_delta(std::cout, d, format, prefix);
  };
  callbacks.on_batch_end = [] { std::cout.flush(); };
  if (*format == output_format::delta_line)
    callbacks.on_synced = [] { std::cout << synced_line << std::endl; };
  auto handler = spawn_handler(system, inf, std::move(callbacks));

  stop.wait();
  caf::anon_send_exit(handler, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(inf, caf::exit_reason::user_shutdown);
  return 0;
}
