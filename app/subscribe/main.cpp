// kinformer-subscribe: a handler actor in its own process, subscribed to a running kinformerd
// over CAF's network layer. Prints every delta as kinformer-watch does (one JSON line each,
// then {"type":"SYNCED"}).
//
//   kinformer-subscribe --connect HOST:PORT [--secret-file F]
//       [--tls-ca F --tls-cert F --tls-key F | --plaintext]
//       [--kubeconfig F] [--context C] [-n NS | -A] [-l SEL] [--field-selector SEL]
//       [--metadata-only] RESOURCE

#include "actors/actor_system_setup.hpp"
#include "actors/remote_setup.hpp"
#include "actors/remote_subscriber.hpp"
#include "app/common/allocator_tuning.hpp"
#include "app/common/client_flags.hpp"
#include "app/common/delta_line.hpp"
#include "app/common/stop_signals.hpp"
#include "protocol/selector.hpp"

#include <CLI/App.hpp>
#include <CLI/Config.hpp>
#include <CLI/Formatter.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include <atomic>
#include <csignal>
#include <fstream>
#include <iostream>
#include <pthread.h>
#include <sstream>
#include <string>

using namespace kinformer;

namespace {

const char* description =
    "Subscribes a handler in this process to RESOURCE (kubectl-style: pods,\n"
    "deployments.apps) in a running kinformerd, through its remote-subscription port, and\n"
    "prints each delta as one JSON line, then {\"type\":\"SYNCED\"} once synced.\n"
    "As kubectl: without -n or -A, the kubeconfig context's namespace (\"default\" when it has\n"
    "none, or there is no kubeconfig); --kubeconfig and --context serve only to find it, since\n"
    "kinformer-subscribe connects to kinformerd, not to the API server.";

int fail(const std::string& message) {
  std::cerr << "kinformer-subscribe: " << message << "\n";
  return 2;
}

bool read_secret(const std::string& path, std::string& out) {
  std::ifstream in(path);
  if (!in)
    return false;
  std::stringstream text;
  text << in.rdbuf();
  out = text.str();
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r'))
    out.pop_back();
  return true;
}

} // namespace

int main(int argc, char** argv) {
  tune_allocator({.max_arenas = 1}); // one arena: the smallest heap (allocator_tuning.hpp)
  std::string connect, secret_file;
  remote_tls tls;
  bool plaintext = false;
  client_flags flags;
  remote_subscription_request request;
  CLI::App app(description, "kinformer-subscribe");
  add_version_flag(app);
  app.add_option("--connect", connect, "kinformerd's remote-subscription address, HOST:PORT")
      ->required();
  app.add_option("--secret-file", secret_file, "the shared secret kinformerd expects");
  app.add_option("--tls-ca", tls.ca_file, "CA that signed kinformerd's certificate (and ours)");
  app.add_option("--tls-cert", tls.certificate_file, "this subscriber's certificate (PEM)");
  app.add_option("--tls-key", tls.key_file, "its private key (PEM)");
  app.add_flag("--plaintext", plaintext, "no TLS (only when kinformerd is configured for it)");
  add_kubeconfig_flags(app, flags);
  add_selection_flags(app, flags);
  app.add_flag("--metadata-only", request.metadata_only, "the kind's metadata-only informer");
  app.add_option("--name", request.name, "this subscriber's name in kinformerd's logs and metrics");
  app.add_option("RESOURCE", request.resource, "what to subscribe to: pods, deployments.apps")
      ->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0)
      return app.exit(e); // --help, --version
    return fail(std::string(e.what()) + " (see --help)");
  }
  auto context = kubeconfig_context(flags);
  if (!context)
    return fail(context.err().describe());
  auto namespace_ = resolve_namespace(flags, *context);
  if (!namespace_)
    return fail(namespace_.err().message);
  request.namespace_ = *namespace_;
  request.label_selector = flags.selector;
  request.field_selector = flags.field_selector;
  // Checked here too (kinformerd checks them), so that a typo is reported before connecting.
  if (auto labels = label_selector::parse(request.label_selector); !labels)
    return fail("-l/--selector: " + labels.err().message);
  if (auto fields = field_selector::parse(request.field_selector); !fields)
    return fail("--field-selector: " + fields.err().message);
  auto colon = connect.rfind(':');
  if (connect.empty() || colon == std::string::npos || colon + 1 == connect.size())
    return fail("--connect: expected HOST:PORT, got \"" + connect + "\"");
  auto host = connect.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  unsigned long port = 0;
  try {
    port = std::stoul(connect.substr(colon + 1));
  } catch (...) {
    port = 0;
  }
  if (port == 0 || port > 65535)
    return fail("--connect: bad port in \"" + connect + "\"");
  if (!plaintext && (tls.ca_file.empty() || tls.certificate_file.empty() || tls.key_file.empty()))
    return fail("give --tls-ca, --tls-cert and --tls-key (kinformerd verifies subscribers'"
                " certificates), or --plaintext explicitly");
  if (!secret_file.empty() && !read_secret(secret_file, request.secret))
    return fail("--secret-file: cannot read " + secret_file);

  // SIGINT and SIGTERM end the program; SIGUSR1 is how the handler reports a lost gateway to
  // main, which waits for all three.
  stop_signals stop({SIGUSR1});

  caf::actor_system_config cfg;
  configure_actor_system(cfg);
  configure_remote(cfg, plaintext ? nullptr : &tls);
  caf::actor_system system{cfg};

  remote_callbacks callbacks;
  callbacks.on_delta = [](const delta& d) { std::cout << delta_line(d) << std::endl; };
  callbacks.on_synced = [] { std::cout << synced_line << std::endl; };
  std::atomic<bool> lost{false};
  callbacks.on_error = [&lost](const error& err) {
    std::cerr << "kinformer-subscribe: " << err.describe() << std::endl;
    if (err.code == errc::io) {
      lost = true;
      kill(getpid(), SIGUSR1);
    }
  };
  auto subscription = subscribe_remote(system, host, static_cast<std::uint16_t>(port), !plaintext,
                                       request, std::move(callbacks));
  if (!subscription)
    return fail(subscription.err().describe());

  stop.wait();
  unsubscribe_remote(*subscription);
  return lost ? 1 : 0;
}
