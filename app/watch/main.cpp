// kinformer-watch: one informer, one handler actor, every delta printed as a JSON line.
//
//   kinformer-watch --server URL [--token-file F] [--namespace NS] [--selector SEL] RESOURCE
//
// A reader can follow the whole path here: resolve RESOURCE through discovery, spawn an
// informer (which spawns its reflector), subscribe a handler, print what the handler receives.

#include "actors/actor_system_setup.hpp"
#include "actors/handler.hpp"
#include "actors/informer.hpp"
#include "app/common/allocator_tuning.hpp"
#include "app/common/delta_line.hpp"
#include "protocol/http/api_client.hpp"
#include "protocol/kube_config.hpp"
#include "protocol/rest_mapper.hpp"

#include <caf/all.hpp>

#include <csignal>
#include <cstdio>
#include <iostream>
#include <pthread.h>
#include <string>

using namespace kinformer;

namespace {

const char* usage =
    "usage: kinformer-watch [options] RESOURCE\n"
    "\n"
    "Runs one informer for RESOURCE (kubectl-style: pods, deployments.apps,\n"
    "widgets.example.com) with one handler actor, and prints each delta it receives as one\n"
    "JSON line:\n"
    "  {\"type\":\"ADDED|UPDATED|DELETED\",\"key\":\"ns/name\",\"resourceVersion\":\"...\",\n"
    "   \"initialList\":true|false,\"finalStateUnknown\":true|false}\n"
    "then {\"type\":\"SYNCED\"} once the subscription has synced.\n"
    "\n"
    "options:\n"
    "  --server URL                  API server (http:// or https://)\n"
    "  --kubeconfig FILE             use FILE's current context instead of --server\n"
    "  --token-file FILE             bearer token file, re-read when it changes\n"
    "  --certificate-authority FILE  CA bundle to verify the server with\n"
    "  --insecure-skip-tls-verify    do not verify the server's certificate\n"
    "  --namespace NS                watch only namespace NS (default: all)\n"
    "  --selector SEL                label selector, e.g. app=web,tier!=db\n"
    "  --field-selector SEL          field selector, e.g. status.phase=Running\n"
    "  --metadata-only               store PartialObjectMetadata only\n"
    "  --streaming-list              initial state through a streaming list (KEP-3157)\n";

struct arguments {
  std::string server, kubeconfig, token_file, ca_file, ns, selector, field_selector, resource;
  bool insecure = false, metadata_only = false, streaming = false;
};

int fail(const std::string& message) {
  std::cerr << "kinformer-watch: " << message << "\n";
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  tune_allocator_or_reexec(argv);
  arguments args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };
    bool ok = true;
    if (a == "--help" || a == "-h") {
      std::cout << usage;
      return 0;
    } else if (a == "--server")
      ok = value(args.server);
    else if (a == "--kubeconfig")
      ok = value(args.kubeconfig);
    else if (a == "--token-file")
      ok = value(args.token_file);
    else if (a == "--certificate-authority")
      ok = value(args.ca_file);
    else if (a == "--namespace" || a == "-n")
      ok = value(args.ns);
    else if (a == "--selector" || a == "-l")
      ok = value(args.selector);
    else if (a == "--field-selector")
      ok = value(args.field_selector);
    else if (a == "--insecure-skip-tls-verify")
      args.insecure = true;
    else if (a == "--metadata-only")
      args.metadata_only = true;
    else if (a == "--streaming-list")
      args.streaming = true;
    else if (!a.empty() && a[0] == '-')
      return fail("unknown option " + a + "\n" + usage);
    else if (args.resource.empty())
      args.resource = a;
    else
      return fail("more than one RESOURCE given");
    if (!ok)
      return fail(a + " needs a value");
  }
  if (args.resource.empty())
    return fail(std::string("no RESOURCE given\n") + usage);

  auto config = !args.kubeconfig.empty() ? load_kubeconfig(args.kubeconfig)
                : !args.server.empty()   ? from_server_url(args.server)
                                         : in_cluster_config();
  if (!config)
    return fail(config.err().describe());
  if (!args.token_file.empty())
    config->token_file = args.token_file;
  if (!args.ca_file.empty())
    config->ca_file = args.ca_file;
  if (args.insecure)
    config->insecure_skip_tls_verify = true;

  auto labels = label_selector::parse(args.selector);
  if (!labels)
    return fail(labels.err().describe());
  auto fields = field_selector::parse(args.field_selector);
  if (!fields)
    return fail(fields.err().describe());

  // Block SIGINT and SIGTERM in every thread (threads inherit the mask), so that main can wait
  // for them with sigwait instead of running code in a signal handler.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

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
  informer.namespace_ = args.ns;
  informer.labels = *labels;
  informer.fields = *fields;
  informer.metadata_only = args.metadata_only;
  informer.watch.streaming_list = args.streaming;

  caf::actor_system_config cfg;
  configure_actor_system(cfg);
  caf::actor_system system{cfg};
  auto inf = spawn_informer(system, client, informer);

  handler_callbacks callbacks;
  // One write per batch of deltas, not one per line.
  callbacks.on_delta = [](const delta& d) { std::cout << delta_line(d) << '\n'; };
  callbacks.on_batch_end = [] { std::cout.flush(); };
  callbacks.on_synced = [] { std::cout << synced_line << std::endl; };
  auto handler = spawn_handler(system, inf, std::move(callbacks));

  int received = 0;
  sigwait(&stop_signals, &received);
  caf::anon_send_exit(handler, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(inf, caf::exit_reason::user_shutdown);
  return 0;
}
