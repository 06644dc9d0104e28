// libFuzzer target for the TensorProto decoder (issue 7): bytes -> onnx::TensorProto ->
// DecodeTensor, the code every PutTensor and inline Run input goes through.
//
// Properties: a rejected proto fails with INVALID_ARGUMENT and rents nothing; a decoded tensor
// encodes back to the proto's type, dims and (when it came as raw_data) bytes, and decodes
// again to the same bytes, also when encoded through a transposed (strided) view; every buffer
// goes back to the pool.
//
//   scripts/fuzz                        runs build/fuzz/tests/fuzz/tensor_proto_fuzzer
//   ctest -R fuzz_tensor_proto_replay   replays tests/fuzz/corpus/tensor_proto
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/memory/buffer_ledger.h"
#include "core/memory/buffer_pool.h"
#include "onnx/onnx.pb.h"
#include "server/codec/tensor_codec.h"
#include "server/rpc/rpc_error.h"
#include "tests/fuzz/fuzz_check.h"

namespace onemodel::fuzz {
namespace {

using server::DecodeTensor;
using server::EncodeTensor;

// The bytes of a contiguous tensor, as a string to compare with raw_data.
std::string BytesOf(const Tensor& t) {
  const std::span<const std::byte> raw = t.RawData();
  return {reinterpret_cast<const char*>(raw.data()), raw.size()};
}

// Checks the round-trip properties of `t`, decoded from `proto`, and disposes it.
void CheckDecoded(const onnx::TensorProto& proto, Tensor t, BufferLedger& ledger) {
  onnx::TensorProto encoded;
  EncodeTensor(t, ledger, &encoded);
  FuzzCheck(encoded.data_type() == proto.data_type(), "encoding changed data_type");
  FuzzCheck(std::equal(encoded.dims().begin(), encoded.dims().end(), proto.dims().begin(),
                       proto.dims().end()),
            "encoding changed dims");
  FuzzCheck(encoded.raw_data() == BytesOf(t), "encoding changed the bytes");
  FuzzCheck(!proto.has_raw_data() || encoded.raw_data() == proto.raw_data(),
            "raw_data did not survive decoding and encoding");
  Tensor again = DecodeTensor(encoded, ledger);
  FuzzCheck(BytesOf(again) == encoded.raw_data(), "an encoded tensor decoded to other bytes");
  if (t.rank() >= 2) {
    onnx::TensorProto transposed;
    EncodeTensor(t.Transpose(0, 1), ledger, &transposed);
    Tensor u = DecodeTensor(transposed, ledger);
    onnx::TensorProto back;
    EncodeTensor(u.Transpose(0, 1), ledger, &back);
    FuzzCheck(back.raw_data() == encoded.raw_data(), "transposing twice changed the bytes");
    u.Dispose();
  }
  again.Dispose();
  t.Dispose();
}

// Decodes one input; returns -1 (not kept in the corpus) when it is not a TensorProto.
int DecodeOne(const uint8_t* data, size_t size) {
  onnx::TensorProto proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size))) return -1;
  static BufferPool pool;
  BufferLedger ledger(pool);
  Tensor t;
  try {
    t = DecodeTensor(proto, ledger);
  } catch (const server::RpcError& e) {
    FuzzCheck(e.code() == grpc::StatusCode::INVALID_ARGUMENT, e.what());
    FuzzCheck(ledger.rented_buffers() == 0, "a rejected TensorProto rented memory");
    return 0;
  }
  CheckDecoded(proto, t, ledger);
  FuzzCheck(ledger.rented_buffers() == 0, "the round trip kept a buffer");
  return 0;
}

}  // namespace
}  // namespace onemodel::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return onemodel::fuzz::DecodeOne(data, size);
}
