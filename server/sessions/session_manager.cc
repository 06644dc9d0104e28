#include "server/sessions/session_manager.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#include "core/kernels/kernel_set.h"
#include "server/observability/logging.h"
#include "server/rpc/rpc_error.h"

namespace onemodel::server {
namespace {

// 128 bits from the system's random source, as 32 lowercase hex characters.
std::string NewSessionId() {
  std::random_device device;
  std::string id;
  for (int i = 0; i < 4; ++i) {
    const uint32_t word = device();
    for (int shift = 28; shift >= 0; shift -= 4) id += "0123456789abcdef"[(word >> shift) & 15];
  }
  return id;
}

// Whether `id` has the form of a session id: 32 lowercase hex characters.
bool IsSessionIdForm(std::string_view id) {
  return id.size() == 32 && id.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// "3600 s", "0.25 s".
std::string FormatSeconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", seconds);
  return text;
}

constexpr int64_t kMinChunkBytes = 4096;
constexpr int64_t kMaxChunkBytes = int64_t{1} << 30;

}  // namespace

const char* EndReasonName(EndReason reason) {
  switch (reason) {
    case EndReason::kClosed:
      return "closed";
    case EndReason::kExpired:
      return "expired";
    case EndReason::kShutdown:
      return "closed at shutdown";
  }
  return "ended";
}

SessionManager::SessionManager(const ServerConfig& config, BufferPool& pool, WorkerPool& workers,
                               EndListener on_end)
    : config_(config),
      pool_(pool),
      workers_(workers),
      on_end_(std::move(on_end)),
      server_budget_("server memory ceiling (--memory-limit)", EffectiveMemoryLimit(config)),
      upload_budget_("uploads in flight (--max-upload-bytes-in-flight)",
                     EffectiveUploadLimit(config)),
      ended_ids_(static_cast<size_t>(config.session_tombstones),
                 std::chrono::duration_cast<RecentIds::Clock::duration>(
                     std::chrono::duration<double>(config.session_tombstone_seconds))),
      reaper_([this] { ReapLoop(); }) {}

SessionManager::~SessionManager() {
  {
    std::lock_guard guard(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  reaper_.join();
}

std::shared_ptr<Session> SessionManager::Create(const SessionRequest& r) {
  SessionOptions o;
  o.kernels = &KernelSet::Get(r.exact_kernels ? KernelChoice::kExact : KernelChoice::kFast);
  o.client_name = r.client_name.substr(0, 128);
  o.max_handles = config_.max_handles_per_session;

  if (r.memory_limit_bytes < 0) {
    throw InvalidArgument("memory_limit_bytes must be positive (0 asks for the server default)");
  }
  o.memory_limit_bytes =
      r.memory_limit_bytes ? r.memory_limit_bytes : config_.session_memory_default;
  if (o.memory_limit_bytes > config_.session_memory_max) {
    // Exact counts beside the rounded sizes: one byte over 1 GiB must not read as 1 GiB.
    throw ResourceExhausted(
        "memory_limit_bytes " + std::to_string(o.memory_limit_bytes) + " (" +
        FormatBytes(o.memory_limit_bytes) + ") is above the server's per-session maximum of " +
        std::to_string(config_.session_memory_max) + " (" +
        FormatBytes(config_.session_memory_max) + ", --session-memory-max); ask for less");
  }

  o.arena_chunk_bytes = r.arena_chunk_bytes ? r.arena_chunk_bytes : Arena::kDefaultChunkBytes;
  if (o.arena_chunk_bytes < kMinChunkBytes || o.arena_chunk_bytes > kMaxChunkBytes) {
    throw InvalidArgument("arena_chunk_bytes must be between " + FormatBytes(kMinChunkBytes) +
                          " and " + FormatBytes(kMaxChunkBytes) + " (got " +
                          std::to_string(r.arena_chunk_bytes) + "); 0 means 1 MiB");
  }

  const auto max_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(config_.max_idle_timeout_seconds * 1000));
  if (r.idle_timeout_ms < 0 || std::chrono::milliseconds(r.idle_timeout_ms) > max_timeout) {
    throw InvalidArgument("idle_timeout_ms must be between 1 and " +
                          std::to_string(max_timeout.count()) + " (--max-idle-timeout; got " +
                          std::to_string(r.idle_timeout_ms) + "); 0 means the server default");
  }
  o.idle_timeout =
      r.idle_timeout_ms
          ? std::chrono::milliseconds(r.idle_timeout_ms)
          : std::chrono::milliseconds(static_cast<int64_t>(config_.idle_timeout_seconds * 1000));
  if (!r.id.empty() && !IsSessionIdForm(r.id)) {
    throw InvalidArgument(
        "a proposed session id (the 'onemodel-session' header of CreateSession) must be 32 "
        "lowercase hex characters; send none to get a random one");
  }
  o.id = r.id.empty() ? NewSessionId() : r.id;

  std::lock_guard guard(mutex_);
  if (sessions_.count(o.id)) {
    throw RpcError(grpc::StatusCode::ALREADY_EXISTS,
                   "the proposed session id (the 'onemodel-session' header of CreateSession) is "
                   "in use; propose another random id or send none");
  }
  if (!r.id.empty()) CheckNotRecent(o.id);
  if (static_cast<int64_t>(sessions_.size()) >= config_.max_sessions) {
    throw ResourceExhausted("the server has " + std::to_string(config_.max_sessions) +
                            " sessions open, its --max-sessions limit; close sessions you no "
                            "longer use or try again later");
  }
  o.serial = next_serial_++;
  auto session = std::make_shared<Session>(o, pool_, &server_budget_, workers_);
  sessions_.emplace(o.id, session);
  ++counters_.created;
  return session;
}

void SessionManager::CheckNotRecent(const std::string& id) {
  switch (ended_ids_.Check(id, RecentIds::Clock::now())) {
    case RecentIds::kFree:
      return;
    case RecentIds::kRecent:
      throw RpcError(grpc::StatusCode::ALREADY_EXISTS,
                     "the proposed session id (the 'onemodel-session' header of CreateSession) "
                     "belonged to a session that ended less than " +
                         FormatSeconds(config_.session_tombstone_seconds) +
                         " ago (--session-tombstone-seconds), and a client may still be using "
                         "it; propose another random id or send none");
    case RecentIds::kUnknown:
      throw ResourceExhausted(
          "more than " + std::to_string(config_.session_tombstones) +
          " sessions ended within --session-tombstone-seconds (--session-tombstones), so the "
          "server cannot tell whether the proposed session id (the 'onemodel-session' header of "
          "CreateSession) is one of them; send none to get a random id, or try again later");
  }
}

std::shared_ptr<Session> SessionManager::Find(const std::string& id) const {
  {
    std::lock_guard guard(mutex_);
    auto it = sessions_.find(id);
    if (it != sessions_.end()) return it->second;
  }
  // Ids are secrets that messages reach logs with: show only enough to tell them apart.
  if (!IsSessionIdForm(id)) {
    throw NotFound("session '" + Printable(id, 6) +
                   "' not found: no session id looks like this; an id is the 32 lowercase hex "
                   "characters CreateSession returned (check for a typo or a cut-off copy)");
  }
  throw NotFound("session '" + Printable(id, 6) + "'" +
                 " not found: it was closed, expired after its idle timeout, or belongs to "
                 "another server instance; create a new session");
}

void SessionManager::Close(const std::string& id,
                           std::function<void(int64_t buffers, int64_t bytes)> done) {
  End(Find(id), EndReason::kClosed, std::move(done));
}

void SessionManager::End(std::shared_ptr<Session> session, EndReason reason,
                         std::function<void(int64_t, int64_t)> done) {
  {
    std::lock_guard guard(mutex_);
    if (sessions_.erase(session->id()) == 0) {
      throw NotFound("session s" + std::to_string(session->serial()) +
                     " not found: it is already closing");
    }
    ended_ids_.Add(session->id(), RecentIds::Clock::now());
    ++closing_;
  }
  Session* s = session.get();
  // The close counts as finished (CloseAll() waits for that, then the manager may go) only when
  // the task lets go of the session, after the strand is done with the task: the task may hold
  // the last reference, and a session gives its memory back to server_budget_ when destroyed.
  std::shared_ptr<Session> held(s, [this, session = std::move(session)](Session*) mutable {
    session.reset();
    std::lock_guard guard(mutex_);
    --closing_;
    changed_.notify_all();  // under the lock, as CloseAll() may destroy the manager next
  });
  s->strand().Post([this, session = std::move(held), reason, done = std::move(done)] {
    const int64_t bytes = session->budget().used();
    int64_t buffers = 0;
    try {
      buffers = session->Close();
    } catch (const std::exception& e) {
      // A CHECKED build found a kernel overrun; the memory is back all the same.
      buffers = session->ledger().leaked();
      LogWithFields(spdlog::level::err, {.session_serial = session->serial()},
                    fmt::format("session s{}: {}", session->serial(), e.what()), e.what());
    }
    {
      std::lock_guard guard(mutex_);
      // Only an expired session lost its handles; a closed one's client chose to end it.
      const bool expired = reason == EndReason::kExpired;
      (expired ? counters_.leaked_buffers_reclaimed : counters_.buffers_released_by_close) +=
          buffers;
      ++(expired ? counters_.expired : counters_.closed);
    }
    if (on_end_) on_end_(*session, reason, buffers);
    if (done) done(buffers, bytes);
  });
}

void SessionManager::CloseAll() {
  std::vector<std::shared_ptr<Session>> all;
  {
    std::lock_guard guard(mutex_);
    for (auto& [id, s] : sessions_) all.push_back(s);
  }
  for (auto& s : all) {
    try {
      End(s, EndReason::kShutdown, nullptr);
    } catch (const RpcError&) {
      // Closed by its client meanwhile.
    }
  }
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return closing_ == 0; });
}

void SessionManager::ReapLoop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    changed_.wait_for(lock, std::chrono::milliseconds(100));
    if (stopping_) break;
    const auto now = Session::Clock::now();
    std::vector<std::shared_ptr<Session>> idle;
    for (auto& [id, s] : sessions_) {
      if (s->Expired(now)) idle.push_back(s);
    }
    lock.unlock();
    for (auto& s : idle) {
      try {
        End(s, EndReason::kExpired, nullptr);
      } catch (const RpcError&) {
        // Closed by its client meanwhile.
      }
    }
    lock.lock();
  }
}

ServerSnapshot SessionManager::Snapshot() const {
  ServerSnapshot snap;
  snap.pool = pool_.Stats();
  std::vector<std::shared_ptr<Session>> all;
  {
    std::lock_guard guard(mutex_);
    snap.sessions = counters_;
    snap.sessions.open = static_cast<int64_t>(sessions_.size());
    all.reserve(sessions_.size());
    for (auto& [id, s] : sessions_) all.push_back(s);
  }
  snap.per_session.reserve(all.size());
  for (auto& s : all) snap.per_session.push_back(s->Snapshot());
  std::sort(snap.per_session.begin(), snap.per_session.end(),
            [](const SessionSnapshot& a, const SessionSnapshot& b) { return a.serial < b.serial; });
  return snap;
}

}  // namespace onemodel::server
