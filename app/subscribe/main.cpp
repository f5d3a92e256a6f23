// kinformer-subscribe: a handler actor in its own process, subscribed to a running kinformerd
// over CAF's network layer. Prints every delta as kinformer-watch does (one JSON line each,
// then {"type":"SYNCED"}).
//
//   kinformer-subscribe --connect HOST:PORT [--secret-file F]
//       [--tls-ca F --tls-cert F --tls-key F | --plaintext]
//       [--namespace NS] [--selector SEL] [--metadata-only] RESOURCE

#include "actors/actor_system_setup.hpp"
#include "actors/remote_setup.hpp"
#include "actors/remote_subscriber.hpp"
#include "app/common/allocator_tuning.hpp"
#include "app/common/delta_line.hpp"

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

const char* usage =
    "usage: kinformer-subscribe --connect HOST:PORT [options] RESOURCE\n"
    "\n"
    "Subscribes a handler in this process to RESOURCE (kubectl-style: pods,\n"
    "deployments.apps) in a running kinformerd, through its remote-subscription port, and\n"
    "prints each delta as one JSON line, then {\"type\":\"SYNCED\"} once synced.\n"
    "\n"
    "options:\n"
    "  --connect HOST:PORT   kinformerd's remote-subscription address\n"
    "  --secret-file FILE    the shared secret kinformerd expects\n"
    "  --tls-ca FILE         CA that signed kinformerd's certificate (and ours)\n"
    "  --tls-cert FILE       this subscriber's certificate (PEM)\n"
    "  --tls-key FILE        its private key (PEM)\n"
    "  --plaintext           no TLS (only when kinformerd is configured for it)\n"
    "  --namespace NS        only objects in namespace NS\n"
    "  --selector SEL        only objects whose labels match SEL\n"
    "  --metadata-only       the kind's metadata-only informer\n"
    "  --name NAME           this subscriber's name in kinformerd's logs and metrics\n";

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
  tune_allocator_or_reexec(argv);
  std::string connect, secret_file;
  remote_tls tls;
  bool plaintext = false;
  remote_subscription_request request;
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
    } else if (a == "--connect")
      ok = value(connect);
    else if (a == "--secret-file")
      ok = value(secret_file);
    else if (a == "--tls-ca")
      ok = value(tls.ca_file);
    else if (a == "--tls-cert")
      ok = value(tls.certificate_file);
    else if (a == "--tls-key")
      ok = value(tls.key_file);
    else if (a == "--plaintext")
      plaintext = true;
    else if (a == "--namespace" || a == "-n")
      ok = value(request.namespace_);
    else if (a == "--selector" || a == "-l")
      ok = value(request.label_selector);
    else if (a == "--metadata-only")
      request.metadata_only = true;
    else if (a == "--name")
      ok = value(request.name);
    else if (!a.empty() && a[0] == '-')
      return fail("unknown option " + a + "\n" + usage);
    else if (request.resource.empty())
      request.resource = a;
    else
      return fail("more than one RESOURCE given");
    if (!ok)
      return fail(a + " needs a value");
  }
  if (request.resource.empty())
    return fail(std::string("no RESOURCE given\n") + usage);
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
  // main, which waits for all three with sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

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

  int received = 0;
  sigwait(&signals, &received);
  unsubscribe_remote(*subscription);
  return lost ? 1 : 0;
}
