#pragma once
// Lets a thread that is not one of CAF's (an HTTP I/O thread, a user's thread) spawn actors or
// make a scoped_actor without keeping the actor system from shutting down.
//
// Why: CAF 0.17's spawn and scoped_actor pin the actor system's logger to the calling thread (a
// thread-local strong reference), and ~actor_system waits until every such reference is gone. A
// thread that spawned once and outlives the system (the API client's I/O thread, which answers
// the read API's access reviews) would make that wait last for good.

namespace kinformer {

// Restores, when it goes out of scope, what the calling thread held before: a thread that held
// no logger holds none again; CAF's own threads keep theirs. Declare it before the scoped_actor.
class foreign_thread_scope {
public:
  foreign_thread_scope();
  ~foreign_thread_scope();
  foreign_thread_scope(const foreign_thread_scope&) = delete;
  foreign_thread_scope& operator=(const foreign_thread_scope&) = delete;

private:
  bool held_ = false;
};

} // namespace kinformer
