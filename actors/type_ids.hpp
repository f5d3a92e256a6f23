#pragma once
// The one place where kinformer's message types and atoms are made known to CAF.
// Included only by actor translation units (CAF headers are heavy).

#include "actors/cache_messages.hpp"
#include "actors/messages.hpp"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>

// Local-only types: they hold shared pointers to immutable objects and never cross the wire.
// Remote subscribers get an inspectable wire form instead (see the remote gateway).
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::object_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::object_list)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::versioned_list)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::delta_batch)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::informer_event)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<kinformer::informer_event>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::subscription_options)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::list_options)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::informer_stats)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::reflector_report)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::store_snapshot)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::index_func)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::kind_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::cache_get_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::cache_list_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kinformer::cache_stats)

namespace kinformer::atoms {

// Atom texts are at most 10 characters.
using subscribe_atom = caf::atom_constant<caf::atom("subscribe")>;
using unsubscribe_atom = caf::atom_constant<caf::atom("unsubscr")>;
using deliver_atom = caf::atom_constant<caf::atom("deliver")>;
using ack_atom = caf::atom_constant<caf::atom("ack")>;
using synced_atom = caf::atom_constant<caf::atom("synced")>;
using wait_sync_atom = caf::atom_constant<caf::atom("waitsync")>;
using get_atom = caf::atom_constant<caf::atom("get")>;
using list_atom = caf::atom_constant<caf::atom("list")>;
using snapshot_atom = caf::atom_constant<caf::atom("snapshot")>;
using stats_atom = caf::atom_constant<caf::atom("stats")>;
using add_index_atom = caf::atom_constant<caf::atom("addindex")>;
using resync_atom = caf::atom_constant<caf::atom("resync")>;
using progress_atom = caf::atom_constant<caf::atom("progress")>;

// The cache.
using get_informer_atom = caf::atom_constant<caf::atom("getinform")>;
using remove_informer_atom = caf::atom_constant<caf::atom("rminform")>;
using index_field_atom = caf::atom_constant<caf::atom("indexfld")>;
// Cache -> subscription relay: a slot's informer was restarted.
using rebind_atom = caf::atom_constant<caf::atom("rebind")>;

// The controller toolkit (actors/controller/): sources -> controller, controller -> workers.
using enqueue_atom = caf::atom_constant<caf::atom("enqueue")>;
using reconcile_atom = caf::atom_constant<caf::atom("reconcile")>;
// The event recorder (actors/controller/event_recorder.hpp): an Event to record; a write done.
using record_atom = caf::atom_constant<caf::atom("record")>;
using written_atom = caf::atom_constant<caf::atom("written")>;
// Leader election (actors/controller/leader_elector.hpp): leadership won or lost; a release.
using leading_atom = caf::atom_constant<caf::atom("leading")>;
using release_atom = caf::atom_constant<caf::atom("release")>;

// Remote subscribers (actors/remote_gateway.hpp).
using remote_subscribe_atom = caf::atom_constant<caf::atom("rsubscribe")>;
using remote_deliver_atom = caf::atom_constant<caf::atom("rdeliver")>;

// Reflector -> informer.
using list_batch_atom = caf::atom_constant<caf::atom("listbatch")>;
using replace_atom = caf::atom_constant<caf::atom("replace")>;
using event_atom = caf::atom_constant<caf::atom("event")>;
using events_atom = caf::atom_constant<caf::atom("events")>;
using bookmark_atom = caf::atom_constant<caf::atom("bookmark")>;
using report_atom = caf::atom_constant<caf::atom("report")>;
// Informer -> reflector: events processed, more may come.
using credit_atom = caf::atom_constant<caf::atom("credit")>;

// I/O thread -> reflector.
using listed_atom = caf::atom_constant<caf::atom("listed")>;
using list_items_atom = caf::atom_constant<caf::atom("litems")>;
// A list page's continue token, known before its items (the next page may be asked for).
using list_continue_atom = caf::atom_constant<caf::atom("lcont")>;
using wopened_atom = caf::atom_constant<caf::atom("wopened")>;
using wevent_atom = caf::atom_constant<caf::atom("wevent")>;
using wevents_atom = caf::atom_constant<caf::atom("wevents")>;
using wclosed_atom = caf::atom_constant<caf::atom("wclosed")>;
using timer_atom = caf::atom_constant<caf::atom("timer")>;
using start_atom = caf::atom_constant<caf::atom("start")>;

} // namespace kinformer::atoms
