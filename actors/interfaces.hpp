#pragma once
// Every typed actor interface of kinformer, in one place.

#include "actors/type_ids.hpp"

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>
#include <string>

namespace kinformer {

// A handler: receives one subscription's deltas, in order, in batches. It must acknowledge each
// batch with (ack_atom, subscription, n) to the informer, which sends no more than the
// subscription's window ahead of the acknowledgements.
using handler_actor =
    caf::typed_actor<caf::reacts_to<atoms::deliver_atom, subscription_id, delta_batch>,
                     caf::reacts_to<atoms::synced_atom, subscription_id>>;

// An informer: owns one store, is fed by its reflector, fans deltas out to handlers and answers
// reads.
using informer_actor = caf::typed_actor<
    // Handlers.
    caf::replies_to<atoms::subscribe_atom, handler_actor,
                    subscription_options>::with<subscription_id>,
    caf::reacts_to<atoms::unsubscribe_atom, subscription_id>,
    caf::reacts_to<atoms::ack_atom, subscription_id, std::uint64_t>,
    caf::reacts_to<atoms::resync_atom, subscription_id>,
    // Reads.
    caf::replies_to<atoms::get_atom, std::string>::with<object_ptr>,
    caf::replies_to<atoms::list_atom, list_options>::with<object_list>,
    caf::replies_to<atoms::snapshot_atom>::with<store_snapshot>,
    caf::replies_to<atoms::stats_atom>::with<informer_stats>,
    // Replies true once the store has synced (at once when it already has).
    caf::replies_to<atoms::wait_sync_atom>::with<bool>,
    caf::replies_to<atoms::add_index_atom, std::string, index_func>::with<bool>,
    // From the reflector.
    caf::reacts_to<atoms::replace_atom, object_list, std::string>,
    caf::reacts_to<atoms::event_atom, informer_event>,
    caf::reacts_to<atoms::bookmark_atom, std::string>,
    caf::reacts_to<atoms::report_atom, reflector_report>>;

} // namespace kinformer
