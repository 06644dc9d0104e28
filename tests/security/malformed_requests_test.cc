// Every field of every OneModel request, wrong in each way it can be: one table row per
// malformed request (the RPC, what is wrong, how a valid request is broken, the status code
// and words the refusal must carry). After each refusal the session must hold the same
// handles as before (nothing half-made is kept) and still run an operation.
#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "tests/client/server_test.h"
#include "tests/common/proto_attributes.h"

namespace onemodel::testing {
namespace {

using grpc::StatusCode;
using Stub = v1::OneModel::Stub;
using P = onnx::TensorProto;

constexpr int64_t kMaxRunOperations = 8;
const std::string kUnknownSession(32, '0');

// The session and handles the rows refer to, made once per test process.
struct World {
  std::string a;          // the session every row addresses
  std::string b;          // another session
  std::string x;          // FLOAT [2, 3] in a's pool, requires grad
  std::string ints;       // INT32 [3] in a's pool
  std::string plain;      // FLOAT [3] in a's pool, no grad
  std::string y;          // Mul(x, x) in a's arena, recorded
  std::string root;       // Sum(y), one element, recorded
  std::string broadcast;  // Expand(plain) to [2, 3]: a stride-0 view
  std::string stale;      // an arena handle of a from before an arena reset
  std::string released;   // a pool handle of a, released
  std::string theirs;     // a FLOAT [2, 3] pool handle of b
};

// How a row names its session: in the message field (the valid way), not at all, with a
// header that disagrees with the field, or with an id the server never issued.
enum class Naming { kField, kNeither, kDisagreeing, kUnknown };

// Names the session of a call in `field` and the metadata of `context` as `naming` says.
void Name(Naming naming, const World& w, std::string* field, grpc::ClientContext& context) {
  *field = naming == Naming::kUnknown ? kUnknownSession : w.a;
  if (naming == Naming::kNeither) field->clear();
  if (naming == Naming::kDisagreeing) context.AddMetadata("onemodel-session", w.b);
}

// A context that gives up after 20 s, so a hanging server fails the row instead of the run.
void SetDeadline(grpc::ClientContext& context) {
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
}

using Send = std::function<grpc::Status(Stub&, const World&)>;

struct Row {
  std::string name;  // "<RPC>: <what is wrong>"
  Send send;
  StatusCode code;
  std::string words;  // the message must contain them
};

// Names a row in test output.
void PrintTo(const Row& row, std::ostream* out) { *out << row.name; }

template <typename Request, typename Reply>
using UnaryMethod = grpc::Status (Stub::*)(grpc::ClientContext*, const Request&, Reply*);
template <typename Request, typename Reply>
using ReaderMethod = std::unique_ptr<grpc::ClientReader<Reply>> (Stub::*)(grpc::ClientContext*,
                                                                          const Request&);
template <typename Request>
using Mutation = std::function<void(Request&, const World&)>;

// The rows of one unary or server-streaming RPC: a valid request, broken by each row.
template <typename Request, typename Reply, typename Method>
class Rpc {
 public:
  using RequestType = Request;

  Rpc(std::string name, Method method, void (*valid)(Request&, const World&))
      : name_(std::move(name)), method_(method), valid_(valid) {}

  // A row whose request is the valid one changed by `mutate`, naming its session as `naming`.
  Row operator()(std::string what, Mutation<Request> mutate, StatusCode code, std::string words,
                 Naming naming = Naming::kField) const {
    Send send = [method = method_, valid = valid_, mutate, naming](Stub& stub, const World& w) {
      Request request;
      valid(request, w);
      if (mutate) mutate(request, w);
      grpc::ClientContext context;
      SetDeadline(context);
      if constexpr (requires { request.mutable_session_id(); }) {
        Name(naming, w, request.mutable_session_id(), context);
      }
      return Call(stub, method, context, request);
    };
    return {name_ + ": " + what, send, code, std::move(words)};
  }
  // The three wrong ways of naming the session, each with the valid request.
  std::vector<Row> SessionRows() const {
    return {(*this)("no session id in the header or the field", nullptr,
                    StatusCode::INVALID_ARGUMENT, "no session id", Naming::kNeither),
            (*this)("header and field name different sessions", nullptr,
                    StatusCode::INVALID_ARGUMENT, "name different sessions", Naming::kDisagreeing),
            (*this)("unknown session id", nullptr, StatusCode::NOT_FOUND, "not found",
                    Naming::kUnknown)};
  }

 private:
  static grpc::Status Call(Stub& stub, UnaryMethod<Request, Reply> method,
                           grpc::ClientContext& context, const Request& request) {
    Reply reply;
    return (stub.*method)(&context, request, &reply);
  }
  // Reads at most one message, then cancels: a stream that was refused ends at once.
  static grpc::Status Call(Stub& stub, ReaderMethod<Request, Reply> method,
                           grpc::ClientContext& context, const Request& request) {
    auto reader = (stub.*method)(&context, request);
    Reply reply;
    if (reader->Read(&reply)) context.TryCancel();
    return reader->Finish();
  }

  std::string name_;
  Method method_;
  void (*valid_)(Request&, const World&);
};

template <typename Request, typename Reply>
Rpc(std::string, UnaryMethod<Request, Reply>, void (*)(Request&, const World&))
    -> Rpc<Request, Reply, UnaryMethod<Request, Reply>>;
template <typename Request, typename Reply>
Rpc(std::string, ReaderMethod<Request, Reply>, void (*)(Request&, const World&))
    -> Rpc<Request, Reply, ReaderMethod<Request, Reply>>;

// FLOAT `dims` with zeroed raw_data of the right length.
P Floats(std::vector<int64_t> dims) {
  P t;
  t.set_data_type(P::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) {
    t.add_dims(d);
    n *= d;
  }
  t.set_raw_data(std::string(static_cast<size_t>(n) * 4, '\0'));
  return t;
}

// The valid request of each RPC (the session is named separately), which rows then break.
void ValidCreate(v1::CreateSessionRequest& r, const World&) { r.set_client_name("malformed"); }
void ValidKeepAlive(v1::KeepAliveRequest&, const World&) {}
void ValidClose(v1::CloseSessionRequest&, const World&) {}
void ValidPut(v1::PutTensorRequest& r, const World&) { *r.mutable_tensor() = Floats({2, 3}); }
void ValidGet(v1::GetTensorRequest& r, const World& w) { r.set_handle(w.x); }
void ValidDescribe(v1::DescribeTensorRequest& r, const World& w) { r.set_handle(w.x); }
void ValidDownload(v1::DownloadTensorRequest& r, const World& w) { r.set_handle(w.x); }
void ValidRelease(v1::ReleaseTensorsRequest&, const World&) {}  // releases nothing
void ValidRun(v1::RunRequest& r, const World& w) {
  v1::Operation* op = r.add_operations();
  op->set_op("Neg");
  op->add_inputs()->set_handle(w.x);
}
void ValidBackward(v1::BackwardRequest& r, const World& w) {
  r.set_root(w.root);
  r.add_inputs(w.x);
  r.set_retain_graph(true);
}
void ValidReset(v1::ResetArenaRequest&, const World&) {}
void ValidStats(v1::StatsRequest&, const World&) {}
void ValidWatch(v1::WatchStatsRequest& r, const World&) { r.set_interval_ms(100); }

const Rpc kCreate("CreateSession", &Stub::CreateSession, ValidCreate);
const Rpc kKeepAlive("KeepAlive", &Stub::KeepAlive, ValidKeepAlive);
const Rpc kClose("CloseSession", &Stub::CloseSession, ValidClose);
const Rpc kPut("PutTensor", &Stub::PutTensor, ValidPut);
const Rpc kGet("GetTensor", &Stub::GetTensor, ValidGet);
const Rpc kDescribe("DescribeTensor", &Stub::DescribeTensor, ValidDescribe);
const Rpc kDownload("DownloadTensor", &Stub::DownloadTensor, ValidDownload);
const Rpc kRelease("ReleaseTensors", &Stub::ReleaseTensors, ValidRelease);
const Rpc kRun("Run", &Stub::Run, ValidRun);
const Rpc kBackward("Backward", &Stub::Backward, ValidBackward);
const Rpc kReset("ResetArena", &Stub::ResetArena, ValidReset);
const Rpc kStats("GetStats", &Stub::GetStats, ValidStats);
const Rpc kWatch("WatchStats", &Stub::WatchStats, ValidWatch);

using Upload = std::vector<v1::UploadTensorRequest>;

// The messages of a valid upload: a FLOAT [2] header, then its 8 bytes in two chunks.
Upload ValidUpload() {
  Upload messages(3);
  v1::UploadHeader* header = messages[0].mutable_header();
  header->set_data_type(P::FLOAT);
  header->add_dims(2);
  messages[1].set_data(std::string(4, '\0'));
  messages[2].set_data(std::string(4, '\0'));
  return messages;
}

// An UploadTensor row: the valid upload changed by `mutate` (the header's session named as
// `naming`, when there is a header first).
Row UploadRow(std::string what, std::function<void(Upload&, const World&)> mutate, StatusCode code,
              std::string words, Naming naming = Naming::kField) {
  Send send = [mutate, naming](Stub& stub, const World& w) {
    Upload messages = ValidUpload();
    grpc::ClientContext context;
    SetDeadline(context);
    Name(naming, w, messages[0].mutable_header()->mutable_session_id(), context);
    if (mutate) mutate(messages, w);
    v1::TensorInfo reply;
    auto writer = stub.UploadTensor(&context, &reply);
    for (const v1::UploadTensorRequest& m : messages) {
      if (!writer->Write(m)) break;  // the server already answered
    }
    writer->WritesDone();
    return writer->Finish();
  };
  return {"UploadTensor: " + what, send, code, std::move(words)};
}

// `r`'s tensor field changed by `change` (for PutTensor rows about the TensorProto).
Mutation<v1::PutTensorRequest> Tensor(std::function<void(P&)> change) {
  return [change](v1::PutTensorRequest& r, const World&) { change(*r.mutable_tensor()); };
}
// The first operation of a Run request changed by `change`.
Mutation<v1::RunRequest> Op(std::function<void(v1::Operation&, const World&)> change) {
  return [change](v1::RunRequest& r, const World& w) { change(*r.mutable_operations(0), w); };
}
// The first operation replaced by `name` on `inputs` (handles) with `attributes`.
Mutation<v1::RunRequest> OpOf(std::string name, std::vector<std::string World::*> inputs,
                              std::map<std::string, v1::Attribute> attributes = {}) {
  return Op([=](v1::Operation& op, const World& w) {
    op.Clear();
    op.set_op(name);
    for (auto member : inputs) op.add_inputs()->set_handle(w.*member);
    for (const auto& [key, value] : attributes) (*op.mutable_attributes())[key] = value;
  });
}

// Every way the handle field `field` can be wrong, as rows of `rpc` that set it with `set`;
// an empty handle is a row unless it means "none" for this field.
template <typename R>
std::vector<Row> HandleRows(const R& rpc, const std::string& field,
                            std::function<void(typename R::RequestType&, std::string)> set,
                            bool empty_means_none = false) {
  auto with = [set](std::string World::*member) {
    return [set, member](typename R::RequestType& r, const World& w) { set(r, w.*member); };
  };
  auto literal = [set](std::string h) {
    return [set, h](typename R::RequestType& r, const World&) { set(r, h); };
  };
  const std::string unknown = "is not a handle of this session";
  std::vector<Row> rows = {
      rpc(field + " never issued", literal("p999.0123456789abcdef"), StatusCode::NOT_FOUND,
          unknown),
      rpc(field + " malformed", literal("tensor-1"), StatusCode::NOT_FOUND, unknown),
      rpc(field + " in upper-case hex", literal("P1.0123456789ABCDEF"), StatusCode::NOT_FOUND,
          unknown),
      rpc(field + " of 100000 characters", literal(std::string(100000, 'p')), StatusCode::NOT_FOUND,
          unknown),
      rpc(field + " of another session", with(&World::theirs), StatusCode::NOT_FOUND, unknown),
      rpc(field + " released", with(&World::released), StatusCode::NOT_FOUND, "was released"),
      rpc(field + " of the arena before a reset", with(&World::stale),
          StatusCode::FAILED_PRECONDITION, "stale"),
  };
  if (!empty_means_none) {
    rows.push_back(rpc(field + " empty", literal(""), StatusCode::NOT_FOUND, unknown));
  }
  return rows;
}

// The table: every row, grouped by RPC.
std::vector<Row> AllRows();

class MalformedRequestTest : public ::testing::TestWithParam<Row> {
 protected:
  // Starts the server and makes the World (two sessions and their handles).
  static void SetUpTestSuite();
  // Stops the server and checks that it exited cleanly.
  static void TearDownTestSuite() {
    stub_.reset();
    if (server_ && !server_->Stop().ok()) ADD_FAILURE() << "onemodeld did not exit cleanly";
    delete server_;
    server_ = nullptr;
  }

  // The number of handles session a holds.
  static int64_t Handles() {
    grpc::ClientContext context;
    SetDeadline(context);
    v1::StatsRequest request;
    request.set_session_id(world_.a);
    v1::Stats stats;
    const grpc::Status status = stub_->GetStats(&context, request, &stats);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return stats.session().handles();
  }

  static ServerProcess* server_;
  static std::unique_ptr<Stub> stub_;
  static World world_;
};

ServerProcess* MalformedRequestTest::server_ = nullptr;
std::unique_ptr<Stub> MalformedRequestTest::stub_;
World MalformedRequestTest::world_;

void MalformedRequestTest::SetUpTestSuite() {
  server_ = new ServerProcess(
      {"--max-run-operations", std::to_string(kMaxRunOperations), "--session-memory-max", "1GiB"});
  client::Client client(server_->grpc_address());
  stub_ = v1::OneModel::NewStub(client.channel());
  client::Session a = client.CreateSession({.kernels = v1::KERNEL_CHOICE_EXACT});
  client::Session b = client.CreateSession({.kernels = v1::KERNEL_CHOICE_EXACT});
  World& w = world_;
  w.a = a.Detach();
  w.b = b.Detach();
  client::Session in_a = client.AttachSession(w.a);
  client::Session in_b = client.AttachSession(w.b);
  auto run = [&](const std::string& op, std::vector<client::RunInput> inputs,
                 std::vector<client::NamedAttr> attributes = {}) {
    client::RunBuilder builder;
    builder.Op(op, inputs, attributes);
    return in_a.Run(builder).back().id();
  };
  const client::TensorHandle seed = in_a.Put<float>(std::vector<float>{1}, {1});
  w.stale = run("Neg", {seed});
  in_a.ResetArena();
  const client::TensorHandle gone = in_a.Put<float>(std::vector<float>{1}, {1});
  w.released = gone.id();
  in_a.Release({gone});
  const client::TensorHandle x =
      in_a.Put<float>(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}, {.requires_grad = true});
  w.x = x.id();
  w.ints = in_a.Put<int32_t>(std::vector<int32_t>{1, 2, 3}, {3}).id();
  const client::TensorHandle plain = in_a.Put<float>(std::vector<float>{1, 2, 3}, {3});
  w.plain = plain.id();
  const client::TensorHandle y(run("Mul", {x, x}));
  w.y = y.id();
  w.root = run("Sum", {y});
  w.broadcast = run("Expand", {plain}, {{"shape", client::Ints{2, 3}}});
  w.theirs = in_b.Put<float>(std::vector<float>(6), {2, 3}).id();
}

TEST_P(MalformedRequestTest, IsRefusedAndTheSessionStaysUsable) {
  ASSERT_NE(stub_, nullptr);
  const Row& row = GetParam();
  const int64_t handles_before = Handles();
  const grpc::Status status = row.send(*stub_, world_);
  EXPECT_EQ(status.error_code(), row.code) << status.error_message();
  EXPECT_NE(status.error_code(), StatusCode::INTERNAL);
  EXPECT_NE(status.error_code(), StatusCode::UNKNOWN);
  EXPECT_NE(status.error_message().find(row.words), std::string::npos)
      << "the message lacks '" << row.words << "': " << status.error_message();
  // A refusal keeps nothing, and the session goes on.
  if (!status.ok()) {
    EXPECT_EQ(Handles(), handles_before);
  }
  v1::RunRequest run;
  ValidRun(run, world_);
  run.set_session_id(world_.a);
  run.set_no_grad(true);
  grpc::ClientContext context;
  SetDeadline(context);
  v1::RunReply reply;
  const grpc::Status after = stub_->Run(&context, run, &reply);
  EXPECT_TRUE(after.ok()) << "the session is not usable after the refusal: "
                          << after.error_message();
  client::Client client(server_->grpc_address());
  EXPECT_EQ(client.Ping(), server_->instance_id());
}

// Test names from row names: letters and digits, the rest as underscores.
std::string TestName(const ::testing::TestParamInfo<Row>& info) {
  std::string name;
  for (char c : info.param.name) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Table, MalformedRequestTest, ::testing::ValuesIn(AllRows()), TestName);

std::vector<Row> AllRows() {
  const StatusCode kInvalid = StatusCode::INVALID_ARGUMENT;
  const StatusCode kNotFound = StatusCode::NOT_FOUND;
  const StatusCode kStale = StatusCode::FAILED_PRECONDITION;
  const StatusCode kExhausted = StatusCode::RESOURCE_EXHAUSTED;
  constexpr int64_t kHuge = int64_t{1} << 40;
  constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
  std::vector<Row> rows = {
      // CreateSession: kernels, arena_chunk_bytes, memory_limit_bytes, idle_timeout_ms,
      // client_name.
      kCreate("kernels an unknown enum value", [](auto& r, auto&) { r.set_kernels(
                  static_cast<v1::KernelChoice>(7)); }, kInvalid, "kernels 7 is not defined"),
      kCreate("arena_chunk_bytes negative", [](auto& r, auto&) { r.set_arena_chunk_bytes(-1); },
              kInvalid, "arena_chunk_bytes must be between"),
      kCreate("arena_chunk_bytes below 4 KiB", [](auto& r, auto&) { r.set_arena_chunk_bytes(100); },
              kInvalid, "arena_chunk_bytes must be between"),
      kCreate("arena_chunk_bytes huge", [](auto& r, auto&) { r.set_arena_chunk_bytes(kHuge); },
              kInvalid, "arena_chunk_bytes must be between"),
      kCreate("memory_limit_bytes negative",
              [](auto& r, auto&) { r.set_memory_limit_bytes(-5); }, kInvalid,
              "memory_limit_bytes must be positive"),
      kCreate("memory_limit_bytes above --session-memory-max",
              [](auto& r, auto&) { r.set_memory_limit_bytes(kInt64Max); }, kExhausted,
              "--session-memory-max"),
      kCreate("idle_timeout_ms negative", [](auto& r, auto&) { r.set_idle_timeout_ms(-1); },
              kInvalid, "idle_timeout_ms must be between"),
      kCreate("idle_timeout_ms above --max-idle-timeout",
              [](auto& r, auto&) { r.set_idle_timeout_ms(kInt64Max); }, kInvalid,
              "idle_timeout_ms must be between"),
      kCreate("client_name of 1 MiB is accepted (kept to 128 characters)",
              [](auto& r, auto&) { r.set_client_name(std::string(1 << 20, 'n')); },
              StatusCode::OK, ""),

      // PutTensor: tensor (each TensorProto rule), requires_grad, placement, target.
      kPut("tensor missing", [](auto& r, auto&) { r.clear_tensor(); }, kInvalid,
           "data_type is 0 (UNDEFINED)"),
      kPut("tensor.data_type UNDEFINED", Tensor([](P& t) { t.set_data_type(0); }), kInvalid,
           "data_type is 0 (UNDEFINED)"),
      kPut("tensor.data_type unknown", Tensor([](P& t) { t.set_data_type(99); }), kInvalid,
           "element type code 99"),
      kPut("tensor.data_type negative", Tensor([](P& t) { t.set_data_type(-3); }), kInvalid,
           "-3"),
      kPut("tensor.data_type unsupported (STRING)", Tensor([](P& t) {
             t.set_data_type(P::STRING);
             t.clear_raw_data();
             t.add_string_data("a");
           }),
           kInvalid, "STRING"),
      kPut("tensor.dims negative", Tensor([](P& t) { t.set_dims(0, -2); }), kInvalid,
           "negative extent -2"),
      kPut("tensor.dims above 2^31-1", Tensor([](P& t) { t.set_dims(0, kHuge); }), kInvalid,
           "above the 32-bit limit"),
      kPut("tensor.dims product overflows", Tensor([](P& t) {
             t.clear_dims();
             for (int i = 0; i < 4; ++i) t.add_dims(100000);
           }),
           kInvalid, "too large"),
      kPut("tensor.dims rank 9", Tensor([](P& t) {
             t.clear_dims();
             for (int i = 0; i < 9; ++i) t.add_dims(1);
             t.set_raw_data(std::string(4, '\0'));
           }),
           kInvalid, "maximum rank is 8"),
      kPut("tensor.raw_data too short", Tensor([](P& t) { t.set_raw_data(std::string(20, 0)); }),
           kInvalid, "raw_data has 20 bytes"),
      kPut("tensor.raw_data too long", Tensor([](P& t) { t.set_raw_data(std::string(28, 0)); }),
           kInvalid, "raw_data has 28 bytes"),
      kPut("tensor without values", Tensor([](P& t) { t.clear_raw_data(); }), kInvalid,
           "has no data"),
      kPut("tensor.int32_data for a FLOAT tensor", Tensor([](P& t) {
             t.clear_raw_data();
             for (int i = 0; i < 6; ++i) t.add_int32_data(1);
           }),
           kInvalid, "has int32_data"),
      kPut("tensor.string_data for a FLOAT tensor", Tensor([](P& t) {
             t.clear_raw_data();
             t.add_string_data("1");
           }),
           kInvalid, "string_data"),
      kPut("tensor with both raw_data and float_data", Tensor([](P& t) {
             for (int i = 0; i < 6; ++i) t.add_float_data(1);
           }),
           kInvalid, "both raw_data and float_data"),
      kPut("tensor.float_data count wrong", Tensor([](P& t) {
             t.clear_raw_data();
             for (int i = 0; i < 5; ++i) t.add_float_data(1);
           }),
           kInvalid, "float_data has 5 values"),
      kPut("tensor.int32_data out of UINT8 range", Tensor([](P& t) {
             t.set_data_type(P::UINT8);
             t.clear_raw_data();
             for (int v : {1, 300, 2, 3, 4, 5}) t.add_int32_data(v);
           }),
           kInvalid, "outside the range of UINT8"),
      kPut("tensor.raw_data BOOL byte 2", Tensor([](P& t) {
             t.set_data_type(P::BOOL);
             t.set_raw_data(std::string("\1\2\0\0\0\0", 6));
           }),
           kInvalid, "outside the range of BOOL"),
      kPut("tensor.segment set", Tensor([](P& t) { t.mutable_segment()->set_end(1); }), kInvalid,
           "segment"),
      kPut("tensor.data_location EXTERNAL", Tensor([](P& t) {
             t.set_data_location(P::EXTERNAL);
           }),
           kInvalid, "external data"),
      kPut("tensor.external_data entries", Tensor([](P& t) {
             auto* entry = t.add_external_data();
             entry->set_key("location");
             entry->set_value("/etc/passwd");
           }),
           kInvalid, "external data"),
      kPut("requires_grad on INT32", [](auto& r, auto&) {
             r.mutable_tensor()->set_data_type(P::INT32);
             r.set_requires_grad(true);
           },
           kInvalid, "only floating-point tensors can require gradients"),
      kPut("placement an unknown enum value",
           [](auto& r, auto&) { r.set_placement(static_cast<v1::Placement>(9)); }, kInvalid,
           "placement 9 is not defined"),
      kPut("target of another shape", [](auto& r, const World& w) { r.set_target(w.plain); },
           kInvalid, "which is FLOAT [3]"),
      kPut("target of another data type", [](auto& r, const World& w) {
             r.set_target(w.ints);
             *r.mutable_tensor() = Floats({3});
           },
           kInvalid, "which is INT32 [3]"),
      kPut("target a broadcast view", [](auto& r, const World& w) { r.set_target(w.broadcast); },
           kInvalid, "broadcast"),

      // GetTensor, DescribeTensor, DownloadTensor: handle (rows below), chunk_bytes.
      kDownload("chunk_bytes negative", [](auto& r, auto&) { r.set_chunk_bytes(-1); }, kInvalid,
                "chunk_bytes must be positive"),

      // ReleaseTensors: handles.
      kRelease("a handle listed twice", [](auto& r, const World& w) {
                 r.add_handles(w.plain);
                 r.add_handles(w.plain);
               },
               kInvalid, "is listed twice"),
      kRelease("a good handle, then an unknown one (nothing is released)",
               [](auto& r, const World& w) {
                 r.add_handles(w.plain);
                 r.add_handles("p999.0123456789abcdef");
               },
               kNotFound, "is not a handle of this session"),

      // Run: operations (count, op, inputs, attributes, placement).
      kRun("no operations is accepted (no outputs)",
           [](auto& r, auto&) { r.clear_operations(); }, StatusCode::OK, ""),
      kRun("more operations than --max-run-operations", [](auto& r, auto&) {
             for (int i = 0; i < kMaxRunOperations; ++i) *r.add_operations() = r.operations(0);
           },
           kExhausted, "--max-run-operations"),
      kRun("op unknown", Op([](auto& op, auto&) { op.set_op("Conv9d"); }), kInvalid,
           "unknown operation 'Conv9d'"),
      kRun("op empty", Op([](auto& op, auto&) { op.set_op(""); }), kInvalid,
           "unknown operation ''"),
      kRun("op in the wrong case", Op([](auto& op, auto&) { op.set_op("neg"); }), kInvalid,
           "unknown operation 'neg'"),
      kRun("too few inputs", OpOf("Add", {&World::x}), kInvalid, "it takes 2 inputs (got 1)"),
      kRun("too many inputs", OpOf("Neg", {&World::x, &World::x}), kInvalid,
           "it takes 1 input (got 2)"),
      kRun("input without a source",
           Op([](auto& op, auto&) { op.mutable_inputs(0)->Clear(); }), kInvalid,
           "input 0 has no source"),
      kRun("input refers to its own output",
           Op([](auto& op, auto&) { op.mutable_inputs(0)->set_output(0); }), kInvalid,
           "refers to output 0"),
      kRun("input refers to a later output",
           [](auto& r, const World& w) {
             r.mutable_operations(0)->mutable_inputs(0)->set_output(1);
             ValidRun(r, w);
           },
           kInvalid, "refers to output 1"),
      kRun("input output index negative",
           Op([](auto& op, auto&) { op.mutable_inputs(0)->set_output(-1); }), kInvalid,
           "refers to output -1"),
      kRun("input output index huge",
           Op([](auto& op, auto&) { op.mutable_inputs(0)->set_output(1 << 30); }), kInvalid,
           "refers to output"),
      kRun("input handle of another session",
           Op([](auto& op, const World& w) { op.mutable_inputs(0)->set_handle(w.theirs); }),
           kNotFound, "is not a handle of this session"),
      kRun("input handle stale",
           Op([](auto& op, const World& w) { op.mutable_inputs(0)->set_handle(w.stale); }), kStale,
           "stale"),
      kRun("input handle unknown", Op([](auto& op, auto&) {
             op.mutable_inputs(0)->set_handle("a5.0000000000000000");
           }),
           kNotFound, "is not a handle of this session"),
      kRun("inline input tensor malformed", Op([](auto& op, auto&) {
             P t = Floats({2});
             t.set_raw_data("abc");
             *op.mutable_inputs(0)->mutable_tensor() = t;
           }),
           kInvalid, "raw_data has 3 bytes"),
      kRun("inline input tensor of an unknown type", Op([](auto& op, auto&) {
             P t = Floats({2});
             t.set_data_type(1000);
             *op.mutable_inputs(0)->mutable_tensor() = t;
           }),
           kInvalid, "1000"),
      kRun("input of the wrong data type", OpOf("Neg", {&World::ints}), kInvalid, "INT32"),
      kRun("attribute unknown", OpOf("Neg", {&World::x}, {{"alpha", FloatAttr(1)}}), kInvalid,
           "there is no attribute 'alpha'"),
      kRun("attribute of the wrong type (float for int)",
           OpOf("Softmax", {&World::x}, {{"axis", FloatAttr(0.5f)}}), kInvalid,
           "attribute 'axis' must be an int"),
      kRun("attribute of the wrong type (string for ints)",
           OpOf("Reshape", {&World::x}, {{"shape", StringAttr("6")}}), kInvalid,
           "attribute 'shape' must be a list of ints (ints) (got a string (s))"),
      kRun("attribute with no value set", OpOf("Softmax", {&World::x}, {{"axis", {}}}), kInvalid,
           "axis"),
      kRun("required attribute missing", OpOf("Reshape", {&World::x}), kInvalid,
           "attribute 'shape' (a list of ints) is required"),
      kRun("attribute out of 32-bit range",
           OpOf("Softmax", {&World::x}, {{"axis", IntAttr(kHuge)}}), kInvalid, "axis"),
      kRun("attribute out of the tensor's range",
           OpOf("Softmax", {&World::x}, {{"axis", IntAttr(5)}}), kInvalid, "axis"),
      kRun("attribute string not one of the allowed",
           OpOf("ToLayout", {&World::x}, {{"layout", StringAttr("Diagonal")}}), kInvalid,
           "attribute 'layout' must be"),
      kRun("attribute naming an unknown data type",
           OpOf("Cast", {&World::x}, {{"to", IntAttr(999)}}), kInvalid, "999"),
      kRun("Conv2d without its weights (the bias alone is optional)",
           OpOf("Conv2d", {&World::x}), kInvalid, "it takes 2 to 3 inputs (got 1)"),
      kRun("Conv2d strides of three values",
           OpOf("Conv2d", {&World::x, &World::x}, {{"strides", IntsAttr({1, 1, 1})}}), kInvalid,
           "attribute 'strides' must hold two values"),
      kRun("Conv2d dilation of zero",
           OpOf("Conv2d", {&World::x, &World::x}, {{"dilations", IntsAttr({1, 0})}}), kInvalid,
           "attribute 'dilations' must hold values >= 1"),
      kRun("Conv2d negative pad",
           OpOf("Conv2d", {&World::x, &World::x}, {{"pads", IntsAttr({0, -1, 0, 0})}}), kInvalid,
           "attribute 'pads' must hold values >= 0"),
      kRun("Conv2d group of zero", OpOf("Conv2d", {&World::x, &World::x}, {{"group", IntAttr(0)}}),
           kInvalid, "attribute 'group' must be >= 1"),
      kRun("ConvTranspose2d output_padding of three values",
           OpOf("ConvTranspose2d", {&World::x, &World::x},
                {{"output_padding", IntsAttr({1, 1, 1})}}),
           kInvalid, "attribute 'output_padding' must hold two values"),
      kRun("ConvTranspose2d negative output_padding",
           OpOf("ConvTranspose2d", {&World::x, &World::x},
                {{"output_padding", IntsAttr({0, -1})}}),
           kInvalid, "attribute 'output_padding' must hold values >= 0"),
      kRun("reshape to a shape of another size",
           OpOf("Reshape", {&World::x}, {{"shape", IntsAttr({4, 2})}}), kInvalid, "reshape"),
      kRun("placement an unknown enum value",
           Op([](auto& op, auto&) { op.set_placement(static_cast<v1::Placement>(-1)); }), kInvalid,
           "placement -1 is not defined"),
      kRun("the second operation fails: the first one's output is not kept",
           [](auto& r, const World& w) {
             ValidRun(r, w);
             r.mutable_operations(1)->set_op("Nope");
           },
           kInvalid, "operation 1 (Nope)"),
      kRun("Pad mode unknown and 100000 bytes long: the message quotes 32 of them",
           OpOf("Pad", {&World::x},
                {{"pads", IntsAttr({0, 0, 0, 0})}, {"mode", StringAttr(std::string(100000, 'm'))}}),
           kInvalid,
           "attribute 'mode' must be \"constant\", \"reflect\", \"edge\" or \"wrap\" (got "
           "\"" + std::string(32, 'm') + "..."),
      kRun("BatchNorm2d training other than 0 or 1",
           OpOf("BatchNorm2d", {&World::x, &World::plain, &World::plain},
                {{"training", IntAttr(2)}}),
           kInvalid, "attribute 'training' must be 0 or 1 (got 2)"),
      kRun("BatchNorm2d training with a NaN momentum",
           [](auto& r, const World& w) {
             r.clear_operations();
             v1::Operation* image = r.add_operations();  // x [2, 3] as (1, 3, 2, 1)
             image->set_op("Reshape");
             image->add_inputs()->set_handle(w.x);
             (*image->mutable_attributes())["shape"] = IntsAttr({1, 3, 2, 1});
             v1::Operation* var = r.add_operations();  // a running_var of its own
             var->set_op("Neg");
             var->add_inputs()->set_handle(w.plain);
             v1::Operation* bn = r.add_operations();
             bn->set_op("BatchNorm2d");
             bn->add_inputs()->set_output(0);
             bn->add_inputs()->set_handle(w.plain);
             bn->add_inputs()->set_output(1);
             (*bn->mutable_attributes())["training"] = IntAttr(1);
             (*bn->mutable_attributes())["momentum"] = FloatAttr(std::nanf(""));
           },
           kInvalid, "training needs a finite momentum"),
      kRun("Conv2d keep_layout of two",
           OpOf("Conv2d", {&World::x, &World::x}, {{"keep_layout", IntAttr(2)}}), kInvalid,
           "attribute 'keep_layout' must be 0 (NCHW output) or 1"),
      kRun("Grad without index", OpOf("Grad", {&World::root, &World::x}), kInvalid,
           "attribute 'index' (an int) is required"),
      kRun("Grad index past its inputs",
           OpOf("Grad", {&World::root, &World::x}, {{"index", IntAttr(1)}}), kInvalid,
           "attribute 'index' is 1, but there is 1 input X after Y: give 0 to 0"),
      kRun("Grad negative index",
           OpOf("Grad", {&World::root, &World::x}, {{"index", IntAttr(-1)}}), kInvalid,
           "attribute 'index' is -1"),
      kRun("Grad retain_graph of two",
           OpOf("Grad", {&World::root, &World::x}, {{"index", IntAttr(0)}, {"retain_graph",
                                                                            IntAttr(2)}}),
           kInvalid, "attribute 'retain_graph' must be 0 or 1"),
      kRun("Grad of a many-element Y",
           OpOf("Grad", {&World::y, &World::x}, {{"index", IntAttr(0)}}), kInvalid,
           "Grad differentiates a one-element Y"),
      kRun("Grad with respect to a tensor that records nothing",
           OpOf("Grad", {&World::root, &World::plain}, {{"index", IntAttr(0)}}), kInvalid,
           "which does not require gradients"),

      // Backward: root, grad_output, inputs, retain_graph, placement.
      kBackward("root does not require grad",
                [](auto& r, const World& w) { r.set_root(w.plain); }, kInvalid,
                "does not require gradients"),
      kBackward("root with many elements and no grad_output",
                [](auto& r, const World& w) { r.set_root(w.y); }, kInvalid,
                "give an output gradient of its shape"),
      kBackward("grad_output of the wrong shape", [](auto& r, const World& w) {
                  r.set_root(w.y);
                  r.mutable_grad_output()->set_handle(w.plain);
                },
                kInvalid, "does not match the root's shape"),
      kBackward("grad_output of the wrong data type", [](auto& r, auto&) {
                  P t = Floats({1});
                  t.set_data_type(P::DOUBLE);
                  t.set_raw_data(std::string(8, '\0'));
                  *r.mutable_grad_output()->mutable_tensor() = t;
                },
                kInvalid, "does not match"),
      kBackward("grad_output refers to an output", [](auto& r, auto&) {
                  r.mutable_grad_output()->set_output(0);
                },
                kInvalid, "grad_output refers to output 0"),
      kBackward("grad_output without a source",
                [](auto& r, auto&) { r.mutable_grad_output()->Clear(); }, kInvalid,
                "grad_output has no source"),
      kBackward("grad_output inline tensor malformed", [](auto& r, auto&) {
                  P t = Floats({1});
                  t.set_data_type(0);
                  *r.mutable_grad_output()->mutable_tensor() = t;
                },
                kInvalid, "UNDEFINED"),
      kBackward("grad_output handle of another session", [](auto& r, const World& w) {
                  r.mutable_grad_output()->set_handle(w.theirs);
                },
                kNotFound, "is not a handle of this session"),
      kBackward("an input that does not require grad",
                [](auto& r, const World& w) { r.add_inputs(w.plain); }, kInvalid,
                "does not require gradients"),
      kBackward("placement an unknown enum value",
                [](auto& r, auto&) { r.set_placement(static_cast<v1::Placement>(3)); }, kInvalid,
                "placement 3 is not defined"),

      // GetStats and WatchStats: session_id (optional), interval_ms.
      kStats("session_id unknown", nullptr, kNotFound, "not found", Naming::kUnknown),
      kStats("header and field name different sessions", nullptr, kInvalid,
             "name different sessions", Naming::kDisagreeing),
      kWatch("session_id unknown", nullptr, kNotFound, "not found", Naming::kUnknown),
      kWatch("header and field name different sessions", nullptr, kInvalid,
             "name different sessions", Naming::kDisagreeing),
      kWatch("interval_ms below 100", [](auto& r, auto&) { r.set_interval_ms(99); }, kInvalid,
             "interval_ms must be at least 100 (--min-watch-interval-ms"),
      kWatch("interval_ms negative", [](auto& r, auto&) { r.set_interval_ms(-100); }, kInvalid,
             "interval_ms must be at least 100"),
      kWatch("interval_ms above a day",
             [](auto& r, auto&) { r.set_interval_ms(int64_t{1} << 62); }, kInvalid,
             "interval_ms must be at most 86400000 (a day"),

      // UploadTensor: the stream's shape, then each header field.
      UploadRow("empty stream", [](Upload& m, auto&) { m.clear(); }, kInvalid,
                "ended before its header"),
      UploadRow("data before the header",
                [](Upload& m, auto&) { std::swap(m[0], m[1]); }, kInvalid,
                "first message of an upload must be its header"),
      UploadRow("a second header", [](Upload& m, auto&) { m.push_back(m[0]); }, kInvalid,
                "got a second header"),
      UploadRow("more bytes than announced",
                [](Upload& m, auto&) { m[2].set_data(std::string(5, '\0')); }, kInvalid,
                "sent more than the 8 bytes"),
      UploadRow("fewer bytes than announced", [](Upload& m, auto&) { m.pop_back(); }, kInvalid,
                "ended after 4 of the 8 bytes"),
      UploadRow("header.data_type UNDEFINED",
                [](Upload& m, auto&) { m[0].mutable_header()->set_data_type(0); }, kInvalid,
                "UNDEFINED"),
      UploadRow("header.data_type unknown",
                [](Upload& m, auto&) { m[0].mutable_header()->set_data_type(77); }, kInvalid,
                "77"),
      UploadRow("header.data_type unsupported (STRING)",
                [](Upload& m, auto&) { m[0].mutable_header()->set_data_type(P::STRING); },
                kInvalid, "STRING"),
      UploadRow("header.dims negative",
                [](Upload& m, auto&) { m[0].mutable_header()->set_dims(0, -8); }, kInvalid,
                "negative extent -8"),
      UploadRow("header.dims above 2^31-1",
                [](Upload& m, auto&) { m[0].mutable_header()->set_dims(0, kHuge); }, kInvalid,
                "above the 32-bit limit"),
      UploadRow("header.dims needing more than 2^31-1 bytes",
                [](Upload& m, auto&) { m[0].mutable_header()->set_dims(0, 1 << 29); }, kInvalid,
                "buffer limit"),
      UploadRow("header.dims beyond the session memory limit",
                [](Upload& m, auto&) { m[0].mutable_header()->set_dims(0, 3 << 27); },
                kExhausted, "memory limit"),
      UploadRow("header.requires_grad on INT32",
                [](Upload& m, auto&) {
                  m[0].mutable_header()->set_data_type(P::INT32);
                  m[0].mutable_header()->set_requires_grad(true);
                },
                kInvalid, "only floating-point tensors can require gradients"),
      UploadRow("header.placement an unknown enum value",
                [](Upload& m, auto&) {
                  m[0].mutable_header()->set_placement(static_cast<v1::Placement>(5));
                },
                kInvalid, "placement 5 is not defined"),
      UploadRow("header.target never issued",
                [](Upload& m, auto&) {
                  m[0].mutable_header()->set_target("p999.0123456789abcdef");
                },
                kNotFound, "is not a handle of this session"),
      UploadRow("header.target of another session",
                [](Upload& m, const World& w) { m[0].mutable_header()->set_target(w.theirs); },
                kNotFound, "is not a handle of this session"),
      UploadRow("header.target stale",
                [](Upload& m, const World& w) { m[0].mutable_header()->set_target(w.stale); },
                kStale, "stale"),
      UploadRow("header.target of another shape",
                [](Upload& m, const World& w) { m[0].mutable_header()->set_target(w.plain); },
                kInvalid, "which is FLOAT [3]"),
      UploadRow("BOOL data byte 5",
                [](Upload& m, auto&) {
                  m[0].mutable_header()->set_data_type(P::BOOL);
                  m[0].mutable_header()->set_dims(0, 8);
                  m[2].set_data(std::string("\0\0\5\0", 4));
                },
                kInvalid, "outside the range of BOOL"),
      UploadRow("no session id in the header or the metadata", nullptr, kInvalid,
                "no session id", Naming::kNeither),
      UploadRow("header and field name different sessions", nullptr, kInvalid,
                "name different sessions", Naming::kDisagreeing),
      UploadRow("unknown session id", nullptr, kNotFound, "not found", Naming::kUnknown),
  };
  auto add = [&rows](std::vector<Row> more) { rows.insert(rows.end(), more.begin(), more.end()); };
  add(kKeepAlive.SessionRows());
  add(kClose.SessionRows());
  add(kPut.SessionRows());
  add(kGet.SessionRows());
  add(kDescribe.SessionRows());
  add(kDownload.SessionRows());
  add(kRelease.SessionRows());
  add(kRun.SessionRows());
  add(kBackward.SessionRows());
  add(kReset.SessionRows());
  add(HandleRows(kGet, "handle", [](auto& r, std::string h) { r.set_handle(std::move(h)); }));
  add(HandleRows(kDescribe, "handle", [](auto& r, std::string h) { r.set_handle(std::move(h)); }));
  add(HandleRows(kDownload, "handle", [](auto& r, std::string h) { r.set_handle(std::move(h)); }));
  add(HandleRows(kRelease, "handles[0]",
                 [](auto& r, std::string h) { r.add_handles(std::move(h)); }));
  add(HandleRows(
      kPut, "target", [](auto& r, std::string h) { r.set_target(std::move(h)); },
      /*empty_means_none=*/true));
  add(HandleRows(kBackward, "root", [](auto& r, std::string h) { r.set_root(std::move(h)); }));
  add(HandleRows(kBackward, "inputs[1]",
                 [](auto& r, std::string h) { r.add_inputs(std::move(h)); }));
  return rows;
}

}  // namespace
}  // namespace onemodel::testing
