#pragma once
// JPEG decoding with libjpeg-turbo (Debian's libjpeg62-turbo), for the
// images a tool hands the model: stb_image's JPEG decoder read and wrote
// out of bounds on crafted files (prompt_image_fuzzer), libjpeg-turbo is
// fuzzed continuously upstream. A tool's bytes are adversarial: the scans a
// file may have and the memory its decoder may take are bounded, and any
// error makes the image unreadable (never an abort, never a message on
// stderr).

#include <cstdint>
#include <string>
#include <string_view>

namespace parley::protocol::jpeg {

/// The size a JPEG's header gives, without decoding any pixel; false when
/// the header does not read.
bool read_size(std::string_view bytes, uint32_t& width, uint32_t& height);

/// The pixels (RGB, 3 bytes each, rows top to bottom) at the smallest of
/// libjpeg's scales (1, 1/2, 1/4, 1/8) that is still at least `min_width`
/// x `min_height` (the size the caller will scale to: decoding no more
/// than that saves memory and time), or empty when the file does not
/// decode, claims more than `max_pixels`, or would need over `max_memory`
/// bytes of the decoder's own buffers. `width` and `height` get the
/// decoded size.
std::string decode_rgb(std::string_view bytes, uint32_t min_width, uint32_t min_height,
                       uint64_t max_pixels, size_t max_memory, uint32_t& width, uint32_t& height);

}  // namespace parley::protocol::jpeg
