#pragma once
// Every typed actor interface of kinformer, in one place.

#include "actors/controller/controller_stats.hpp"
#include "actors/controller/event_recorder_stats.hpp"
#include "actors/controller/event_series.hpp"
#include "actors/controller/leader_election_status.hpp"
#include "actors/remote_messages.hpp"
#include "actors/type_ids.hpp"

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kinformer {

// A handler: receives one subscription's deltas, in order, in batches. It must acknowledge each
// batch with (ack_atom, subscription, n) to the informer, which sends no more than the
// subscription's window ahead of the acknowledgements.
using handler_actor =
    caf::typed_actor<caf::reacts_to<atoms::deliver_atom, subscription_id, delta_batch>,
                     caf::reacts_to<atoms::synced_atom, subscription_id>>;

// Whatever delivers deltas to a handler (an informer, a cache subscription's relay, the remote
// gateway's bridge): handlers acknowledge each batch to the actor that delivered it.
using ack_receiver_actor =
    caf::typed_actor<caf::reacts_to<atoms::ack_atom, subscription_id, std::uint64_t>>;

// An informer: owns one store, is fed by its reflector, fans deltas out to handlers and answers
// reads.
using informer_actor = caf::typed_actor<
    // Handlers.
    caf::replies_to<atoms::subscribe_atom, handler_actor,
                    subscription_options>::with<subscription_id>,
    caf::reacts_to<atoms::unsubscribe_atom, subscription_id>,
    caf::reacts_to<atoms::ack_atom, subscription_id, std::uint64_t>,
    caf::reacts_to<atoms::resync_atom, subscription_id>,
    // The store's resourceVersion when everything up to it has been delivered to subscription
    // `id` (its queue is empty); "" while deltas are still queued, or for an unknown id. Replied
    // after the deliveries already sent, so a subscriber may bookmark it.
    caf::replies_to<atoms::progress_atom, subscription_id>::with<std::string>,
    // Reads.
    caf::replies_to<atoms::get_atom, std::string>::with<object_ptr>,
    caf::replies_to<atoms::list_atom, list_options>::with<object_list>,
    // The same list with the version of the snapshot it was read from.
    caf::replies_to<atoms::list_atom, list_options, atoms::snapshot_atom>::with<versioned_list>,
    caf::replies_to<atoms::snapshot_atom>::with<store_snapshot>,
    caf::replies_to<atoms::stats_atom>::with<informer_stats>,
    // Replies true once the store has synced (at once when it already has).
    caf::replies_to<atoms::wait_sync_atom>::with<bool>,
    caf::replies_to<atoms::add_index_atom, std::string, index_func>::with<bool>,
    // From the reflector.
    // A (re)list as it arrives: batches of list N, then its last items and resourceVersion.
    caf::reacts_to<atoms::list_batch_atom, std::uint64_t, object_list>,
    caf::reacts_to<atoms::replace_atom, std::uint64_t, object_list, std::string>,
    caf::reacts_to<atoms::event_atom, informer_event>,
    caf::reacts_to<atoms::events_atom, std::vector<informer_event>>,
    caf::reacts_to<atoms::bookmark_atom, std::string>,
    caf::reacts_to<atoms::report_atom, reflector_report>>;

// One informer the cache runs for a kind: the namespace it covers ("" = all, or cluster-scoped).
// The handle changes when the supervisor restarts a failed informer: subscribe through the cache
// (subscribe_atom) to keep a subscription across restarts.
struct informer_handle {
  std::string namespace_;
  informer_actor informer;
};
using informer_set = std::vector<informer_handle>;

} // namespace kinformer

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::informer_set)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::controller_stats)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::reconcile_outcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::event_record)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::event_recorder_stats)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::leader_election_status)

namespace kinformer {

// The cache (controller-runtime's informerCache, multiNamespaceCache and delegatingByGVKCache in
// one supervisor actor; see actors/cache_messages.hpp). Failed requests reply with a caf::error
// carrying a kinformer error (actors/error_bridge.hpp).
using cache_actor = caf::typed_actor<
    // Starts the kind's informers on first use (one per covered namespace) and returns them.
    caf::replies_to<atoms::get_informer_atom, kind_request>::with<informer_set>,
    // Stops the kind's informers; false when it had none.
    caf::replies_to<atoms::remove_informer_atom, kind_request>::with<bool>,
    caf::replies_to<atoms::get_atom, cache_get_request>::with<object_ptr>,
    caf::replies_to<atoms::list_atom, cache_list_request>::with<object_list>,
    // The same list with its resourceVersion, from one snapshot of each informer (one request,
    // one snapshot: what a read API answers a List with).
    caf::replies_to<atoms::list_atom, cache_list_request,
                    atoms::snapshot_atom>::with<versioned_list>,
    // Replies once every informer started so far has synced (a caller bounds it with a timeout).
    caf::replies_to<atoms::wait_sync_atom>::with<bool>,
    // controller-runtime's IndexField: adds the field index "field:<path>" to the kind's
    // informers, starting them if needed.
    caf::replies_to<atoms::index_field_atom, kind_request, std::string>::with<bool>,
    // A subscription to every informer of the kind that survives informer restarts. The handler
    // sees one ordered stream under the returned id and one synced_atom once all of the kind's
    // informers have delivered their initial lists.
    caf::replies_to<atoms::subscribe_atom, kind_request, handler_actor,
                    subscription_options>::with<subscription_id>,
    // Handlers acknowledge a cache subscription's batches to the actor that delivered them.
    caf::reacts_to<atoms::unsubscribe_atom, subscription_id>,
    caf::replies_to<atoms::stats_atom>::with<cache_stats>>;

// A subscriber in another process: receives one subscription's deltas in wire form and
// acknowledges each batch, as a local handler does, to the actor that delivered it.
using remote_handler_actor =
    caf::typed_actor<caf::reacts_to<atoms::remote_deliver_atom, subscription_id, wire_batch>,
                     caf::reacts_to<atoms::synced_atom, subscription_id>>;

// What kinformerd publishes for remote subscribers. The handler travels as a plain caf::actor
// (typed handles need extra registration on both nodes) and must be a remote_handler_actor.
// unsubscribe is obeyed only when that handler sends it (unsubscribe_remote does).
using gateway_actor =
    caf::typed_actor<caf::replies_to<atoms::remote_subscribe_atom, remote_subscription_request,
                                     caf::actor>::with<subscription_id>,
                     caf::reacts_to<atoms::unsubscribe_atom, subscription_id>>;

// A controller (actors/controller/controller.hpp): its sources send it request keys and say when
// they have synced; a timer brings delayed keys due.
using controller_actor =
    caf::typed_actor<caf::reacts_to<atoms::enqueue_atom, std::vector<std::string>>,
                     caf::reacts_to<atoms::synced_atom, std::uint64_t>,
                     caf::reacts_to<atoms::timer_atom>,
                     caf::replies_to<atoms::stats_atom>::with<controller_stats>>;

// The event recorder (actors/controller/event_recorder.hpp): Events to record, the outcome of
// its writes (a write id, how it ended, the error), the end of a retry delay (start), the
// periodic flush of series (timer). wait_sync replies once no write is pending.
using event_recorder_actor =
    caf::typed_actor<caf::reacts_to<atoms::record_atom, event_record>,
                     caf::reacts_to<atoms::written_atom, std::uint64_t, std::int32_t, std::string>,
                     caf::reacts_to<atoms::start_atom>, caf::reacts_to<atoms::timer_atom>,
                     caf::replies_to<atoms::wait_sync_atom>::with<bool>,
                     caf::replies_to<atoms::stats_atom>::with<event_recorder_stats>>;

// A leader elector (actors/controller/leader_elector.hpp): a timer every retry period; the Lease
// as read and the outcome of its writes (attempt, HTTP code or 0 for a transport failure, body);
// release hands the Lease on (replies whether it was held) and stops the elector.
using leader_elector_actor =
    caf::typed_actor<caf::reacts_to<atoms::timer_atom>,
                     caf::reacts_to<atoms::get_atom, std::uint64_t, std::int32_t, std::string>,
                     caf::reacts_to<atoms::written_atom, std::uint64_t, std::int32_t, std::string>,
                     caf::replies_to<atoms::release_atom>::with<bool>,
                     caf::replies_to<atoms::stats_atom>::with<leader_election_status>>;

} // namespace kinformer
