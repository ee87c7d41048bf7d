// libFuzzer target: one line from a client, as the connection reads it. The
// envelope is parsed, then the params are decoded into the typed request of
// every method (and a response's result into every approval decision), then
// re-encoded. Only decode_error may come out of a decoder: anything else
// would reach the client as an internal error.

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "protocol/approvals.hpp"
#include "protocol/jsonrpc.hpp"
#include "protocol/methods.hpp"

namespace {

using namespace parley::protocol;

template <class T>
void try_decode(const json& params) {
  try {
    T decoded = decode<T>(params);
    (void)decoded;
  } catch (const decode_error&) {
  }
}

template <class Fn>
void try_result(Fn decoder, const json& result) {
  try {
    (void)decoder(result);
  } catch (const decode_error&) {
  }
}

void decode_every_request(const json& params) {
  try_decode<initialize_params>(params);
  try_decode<thread_start_params>(params);
  try_decode<thread_read_params>(params);
  try_decode<thread_loaded_list_params>(params);
  try_decode<turn_start_params>(params);
  try_decode<turn_interrupt_params>(params);
  try_decode<turn_steer_params>(params);
  try_decode<thread_resume_params>(params);
  try_decode<thread_fork_params>(params);
  try_decode<thread_list_params>(params);
  try_decode<thread_id_params>(params);
  try_decode<thread_name_set_params>(params);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view line{reinterpret_cast<const char*>(data), size};
  auto parsed = parse_message(line);
  auto* m = std::get_if<incoming_message>(&parsed);
  if (!m) return 0;
  if (m->rejected && (m->type != incoming_message::kind::request || m->has_params)) std::abort();
  switch (m->type) {
    case incoming_message::kind::request:
    case incoming_message::kind::notification:
      decode_every_request(m->params);
      (void)encode_response(m->id, m->params);  // what an echo would send
      break;
    case incoming_message::kind::response:
      try_result(decode_approval_result, m->result);
      try_result(decode_file_change_result, m->result);
      try_result(decode_review_decision_result, m->result);
      (void)encode_response(m->id, m->result);
      break;
    case incoming_message::kind::error_response:
      (void)encode_error(m->id, m->error.code, m->error.message);
      break;
  }
  return 0;
}
