// libFuzzer target: bytes an MCP tool returned as an image. They are made
// ready for the model (protocol/prompt_image), at Codex's limits and at
// tiny ones: decoded within the size a header claims and the decoder's
// allocation cap, scaled down if big, and encoded again. Nothing may crash, read out of bounds or allocate past
// the cap (ASan's allocation limit catches that); a ready image must fit
// the limits and carry bytes.

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "protocol/prompt_image.hpp"

namespace {

/// Made ready within `limits`: nothing may crash; a ready image fits them
/// and carries bytes.
void prepare_within(std::string_view bytes, const parley::protocol::image_limits& limits) {
  using namespace parley::protocol;
  auto out = prepare_prompt_image(bytes, limits);
  if (out.result == prepared_image::outcome::ready) {
    if (out.bytes.empty() || out.width == 0 || out.height == 0) std::abort();
    if (out.width > limits.max_dimension || out.height > limits.max_dimension) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  prepare_within(bytes, parley::protocol::high_detail_limits);
  // Limits so small that every image over 16 pixels a side is decoded and
  // scaled: the decoders (stb_image for PNG, GIF and BMP, libjpeg-turbo for
  // JPEG) see every input, not only the rare big ones.
  prepare_within(bytes, parley::protocol::image_limits{16, 1});
  return 0;
}
