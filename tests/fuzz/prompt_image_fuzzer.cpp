// libFuzzer target: bytes an MCP tool returned as an image. They are made
// ready for the model (protocol/prompt_image): decoded within the size a
// header claims and the decoder's allocation cap, scaled down if big, and
// encoded again. Nothing may crash, read out of bounds or allocate past
// the cap (ASan's allocation limit catches that); a ready image must fit
// the limits and carry bytes.

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "protocol/prompt_image.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parley::protocol;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto out = prepare_prompt_image(bytes, high_detail_limits);
  if (out.result == prepared_image::outcome::ready) {
    if (out.bytes.empty() || out.width == 0 || out.height == 0) std::abort();
    if (out.width > high_detail_limits.max_dimension || out.height > high_detail_limits.max_dimension)
      std::abort();
  }
  return 0;
}
