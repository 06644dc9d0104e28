// SessionManager: creates, finds, closes and expires sessions; owns the server-wide limits.
//
// Sessions live in a map guarded by one mutex (held only to look up, insert or remove). A
// reaper thread expires sessions idle past their timeout; closing and expiring run on the
// session's strand, after the requests already queued there, and return all of the
// session's memory to the shared pool.
//
//   SessionManager sessions(config, pool, workers);
//   std::shared_ptr<Session> s = sessions.Create(request_options);
//   std::shared_ptr<Session> same = sessions.Find(s->id());   // throws NOT_FOUND if gone
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "core/memory/buffer_pool.h"
#include "core/memory/memory_budget.h"
#include "server/config.h"
#include "server/observability/server_snapshot.h"
#include "server/sessions/recent_ids.h"
#include "server/sessions/session.h"

namespace onemodel::server {

// What a client asks for when it creates a session (0 or empty: the server's default).
struct SessionRequest {
  bool exact_kernels = false;
  int64_t arena_chunk_bytes = 0;
  int64_t memory_limit_bytes = 0;
  int64_t idle_timeout_ms = 0;
  std::string client_name;
  std::string id;  // a proposed id (a proxy's placement key, 32 lowercase hex); empty: random
};

// Why a session ended.
enum class EndReason { kClosed, kExpired, kShutdown };
// "closed", "expired", "closed at shutdown".
const char* EndReasonName(EndReason reason);

class SessionManager {
 public:
  // Called after a session closed or expired, with why and the pool buffers it still held
  // (leaked when it expired; released by the close otherwise).
  using EndListener = std::function<void(const Session&, EndReason reason, int64_t buffers)>;

  SessionManager(const ServerConfig& config, BufferPool& pool, WorkerPool& workers,
                 EndListener on_end);
  // Stops the reaper. CloseAll() must have run.
  ~SessionManager();

  // A new session. Throws RpcError: INVALID_ARGUMENT for a bad option or proposed id,
  // ALREADY_EXISTS for a proposed id in use or of a session that ended less than
  // --session-tombstone-seconds ago, RESOURCE_EXHAUSTED for --max-sessions, a memory limit
  // above --session-memory-max, or a proposed id while ended ids had to be forgotten early.
  std::shared_ptr<Session> Create(const SessionRequest& request);
  // The open session `id`, or throws RpcError NOT_FOUND.
  std::shared_ptr<Session> Find(const std::string& id) const;
  // Removes `id` and closes it on its strand; `done` gets the pool buffers it still held (now
  // released) and the bytes given back. Throws RpcError NOT_FOUND for an unknown id.
  void Close(const std::string& id, std::function<void(int64_t buffers, int64_t bytes)> done);
  // Closes every session and waits until all are closed (shutdown).
  void CloseAll();

  ServerSnapshot Snapshot() const;
  MemoryBudget& server_budget() { return server_budget_; }
  // What uploads in flight reserve at their headers (--max-upload-bytes-in-flight).
  MemoryBudget& upload_budget() { return upload_budget_; }

 private:
  // Removes `session` from the map and posts its close; throws RpcError NOT_FOUND when it
  // is already gone.
  void End(std::shared_ptr<Session> session, EndReason reason,
           std::function<void(int64_t buffers, int64_t bytes)> done);
  void ReapLoop();
  // Throws RpcError unless `id` may be given to a new session (see Create); mutex_ is held.
  void CheckNotRecent(const std::string& id);

  const ServerConfig& config_;
  BufferPool& pool_;
  WorkerPool& workers_;
  EndListener on_end_;
  MemoryBudget server_budget_;
  MemoryBudget upload_budget_;

  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<Session>> sessions_;
  RecentIds ended_ids_;  // refused when proposed again
  int64_t next_serial_ = 1;
  SessionCounters counters_;
  int64_t closing_ = 0;  // closes posted and not finished
  std::condition_variable changed_;
  bool stopping_ = false;
  std::thread reaper_;
};

}  // namespace onemodel::server
