#pragma once
// The reflector actor: drives one informer's list/watch state machine (protocol/watcher.hpp)
// against the API server through the shared HTTP client, and feeds the informer.
//
// All network I/O runs on the api_client's I/O thread; its callbacks only post messages to this
// actor. Every request carries the state machine's session id, so messages from a cancelled or
// superseded request are dropped by the machine itself.

#include "actors/interfaces.hpp"
#include "protocol/http/api_client.hpp"

#include <caf/fwd.hpp>

#include <memory>

namespace kinformer {

// Outcome of one LIST request, as the I/O thread posts it.
struct list_outcome {
  std::optional<list_page> page;
  std::optional<error> failure;
  response_info info;
  // The continue token of a page asked for ahead of the state machine (empty: asked by it), and
  // which attempt at the list asked for it.
  std::string prefetched_for;
  std::uint64_t attempt = 0;
};

} // namespace kinformer

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::list_outcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::watch_event)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<kinformer::watch_event>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::watch_closed_info)

namespace kinformer {

using reflector_actor = caf::typed_actor<
    caf::reacts_to<atoms::start_atom>, caf::reacts_to<atoms::listed_atom, session_id, list_outcome>,
    caf::reacts_to<atoms::list_items_atom, session_id, object_list>,
    caf::reacts_to<atoms::list_continue_atom, session_id, std::uint64_t, std::string>,
    caf::reacts_to<atoms::wevent_atom, session_id, watch_event>,
    caf::reacts_to<atoms::wevents_atom, session_id, std::vector<watch_event>>,
    caf::reacts_to<atoms::wclosed_atom, session_id, kinformer::watch_closed_info>,
    caf::reacts_to<atoms::timer_atom, session_id>,
    caf::reacts_to<atoms::credit_atom, std::uint64_t>>;

// Spawns a reflector feeding `informer`; it starts listing on (start_atom). Every list it makes
// reads `held` (protocol/held_objects.hpp): what the informer fills it with while it relists
// comes back for items the list did not change.
reflector_actor spawn_reflector(caf::local_actor* parent, std::shared_ptr<api_client> client,
                                const informer_config& config, informer_actor informer,
                                std::shared_ptr<const held_objects_slot> held);

} // namespace kinformer
