#pragma once
// An image a tool returned, made ready for the model as Codex 0.169 makes
// it: decoded (PNG, JPEG, GIF, BMP; a WebP is read as far as its size), and
// when bigger than the limits scaled down (keeping its aspect ratio, to at
// most `max_dimension` a side and `max_patches` 32x32 patches) and encoded
// again: as JPEG (quality 85) if it was one, else as PNG. An image within
// the limits goes as it came (a GIF or BMP as PNG). The bytes are untrusted:
// the size a header claims is checked before any pixel is decoded (against
// max_decoded_pixels, and against what so many bytes can hold at all), and
// the decoder may allocate no more than that size needs.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace parley::protocol {

struct image_limits {
  uint32_t max_dimension = 2048;
  size_t max_patches = 2500;
};

/// Codex's limits for detail "high" / "auto" (what a model without
/// "original" detail gets).
constexpr image_limits high_detail_limits{2048, 2500};

/// parley's own bound on what it decodes at all: 40 megapixels (a 4-byte
/// pixel: 160 MB). A larger image is unreadable, as one past Codex's
/// decoder's 512 MiB allocation limit is.
constexpr uint64_t max_decoded_pixels = 40'000'000;

struct prepared_image {
  enum class outcome { ready, unreadable, too_large };
  outcome result = outcome::unreadable;
  std::string mime;   // image/png, image/jpeg or image/webp
  std::string bytes;  // the encoded image
  uint32_t source_width = 0, source_height = 0;
  uint32_t width = 0, height = 0;
};

/// The size an image of `width` x `height` is sent at: itself when it fits
/// the limits; else scaled to the largest side's limit, then (if still over
/// the patch budget) by area, the patch grid rounded down.
std::pair<uint32_t, uint32_t> prompt_image_size(uint32_t width, uint32_t height,
                                                const image_limits& limits);

/// `bytes` (an image file's bytes) made ready for the model.
prepared_image prepare_prompt_image(std::string_view bytes, const image_limits& limits);

}  // namespace parley::protocol
