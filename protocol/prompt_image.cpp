#include "protocol/prompt_image.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "protocol/jpeg_codec.hpp"
#include "protocol/stb_codecs.hpp"

namespace parley::protocol {

namespace {

constexpr uint32_t patch_size = 32;
/// Codex's sanity bound on an image's bytes (1 GiB).
constexpr size_t max_input_bytes = size_t{1} << 30;
constexpr uint64_t max_pixels_per_byte = 16384;
/// Codex's quality for a JPEG it scaled down (JPEG stays JPEG).
constexpr int jpeg_quality = 85;

enum class format { png, jpeg, gif, bmp, webp, other };

format format_of(std::string_view b) {
  if (b.size() >= 8 && b.substr(0, 8) == std::string_view("\x89PNG\r\n\x1a\n", 8)) return format::png;
  if (b.size() >= 3 && b.substr(0, 3) == "\xff\xd8\xff") return format::jpeg;
  if (b.size() >= 6 && (b.substr(0, 6) == "GIF87a" || b.substr(0, 6) == "GIF89a")) return format::gif;
  if (b.size() >= 2 && b.substr(0, 2) == "BM") return format::bmp;
  if (b.size() >= 12 && b.substr(0, 4) == "RIFF" && b.substr(8, 4) == "WEBP") return format::webp;
  return format::other;
}

uint32_t byte_at(std::string_view b, size_t i) { return static_cast<unsigned char>(b[i]); }

/// A WebP's canvas size from its first chunk (lossy VP8, lossless VP8L or
/// extended VP8X); false when the header is not one of them.
bool webp_size(std::string_view b, uint32_t& width, uint32_t& height) {
  if (b.size() < 30) return false;
  auto chunk = b.substr(12, 4);
  if (chunk == "VP8 " && byte_at(b, 23) == 0x9d && byte_at(b, 24) == 0x01 && byte_at(b, 25) == 0x2a) {
    width = (byte_at(b, 26) | byte_at(b, 27) << 8) & 0x3fff;
    height = (byte_at(b, 28) | byte_at(b, 29) << 8) & 0x3fff;
  } else if (chunk == "VP8L" && byte_at(b, 20) == 0x2f) {
    uint32_t bits = byte_at(b, 21) | byte_at(b, 22) << 8 | byte_at(b, 23) << 16 | byte_at(b, 24) << 24;
    width = (bits & 0x3fff) + 1;
    height = ((bits >> 14) & 0x3fff) + 1;
  } else if (chunk == "VP8X") {
    width = (byte_at(b, 24) | byte_at(b, 25) << 8 | byte_at(b, 26) << 16) + 1;
    height = (byte_at(b, 27) | byte_at(b, 28) << 8 | byte_at(b, 29) << 16) + 1;
  } else {
    return false;
  }
  return width > 0 && height > 0;
}

bool fits(uint32_t width, uint32_t height, const image_limits& limits) {
  uint64_t patches = uint64_t{(width + patch_size - 1) / patch_size} * ((height + patch_size - 1) / patch_size);
  return width <= limits.max_dimension && height <= limits.max_dimension && patches <= limits.max_patches;
}

/// The input samples one output sample of a resize along an axis reads, and
/// their weights (summing to 1): a triangle filter widened by the scale
/// when shrinking, so each output pixel averages the input pixels it
/// covers, as Codex's image crate does.
struct taps {
  size_t first = 0;
  std::vector<float> weights;
};

std::vector<taps> filter(size_t from, size_t to) {
  std::vector<taps> out(to);
  double ratio = static_cast<double>(from) / static_cast<double>(to);
  double scale = std::max(ratio, 1.0);
  for (size_t o = 0; o < to; ++o) {
    double center = (static_cast<double>(o) + 0.5) * ratio;
    auto left = static_cast<size_t>(std::max(0.0, std::floor(center - scale)));
    auto right = std::min(from, static_cast<size_t>(std::max(0.0, std::ceil(center + scale))));
    std::vector<double> w;
    double total = 0;
    for (size_t i = left; i < right; ++i) {
      double d = std::fabs((static_cast<double>(i) + 0.5 - center) / scale);
      w.push_back(d < 1.0 ? 1.0 - d : 0.0);
      total += w.back();
    }
    if (total <= 0) {  // not for a real image: keep the nearest pixel
      left = std::min(from - 1, static_cast<size_t>(center));
      w.assign(1, 1.0);
      total = 1.0;
    }
    out[o].first = left;
    for (double x : w) out[o].weights.push_back(static_cast<float>(x / total));
  }
  return out;
}

uint8_t sample(float v) { return static_cast<uint8_t>(std::clamp(v + 0.5f, 0.0f, 255.0f)); }

/// `pixels` (w x h, `channels` 8-bit samples each) resized to tw x th:
/// rows first, then columns (the rows' result kept as 8-bit samples: no
/// more memory than the image itself takes).
std::string resize(const std::string& pixels, size_t w, size_t h, size_t channels, size_t tw, size_t th) {
  const auto* in = reinterpret_cast<const uint8_t*>(pixels.data());
  auto across = filter(w, tw);
  std::vector<uint8_t> wide(tw * h * channels);
  for (size_t y = 0; y < h; ++y) {
    const uint8_t* row = in + y * w * channels;
    uint8_t* put = wide.data() + y * tw * channels;
    for (size_t x = 0; x < tw; ++x) {
      float acc[4] = {0, 0, 0, 0};
      const auto& t = across[x];
      for (size_t k = 0; k < t.weights.size(); ++k) {
        const uint8_t* px = row + (t.first + k) * channels;
        for (size_t c = 0; c < channels; ++c) acc[c] += t.weights[k] * px[c];
      }
      for (size_t c = 0; c < channels; ++c) put[x * channels + c] = sample(acc[c]);
    }
  }
  auto down = filter(h, th);
  size_t line = tw * channels;
  std::string out(th * line, '\0');
  std::vector<float> acc(line);
  for (size_t y = 0; y < th; ++y) {
    std::fill(acc.begin(), acc.end(), 0.0f);
    const auto& t = down[y];
    for (size_t k = 0; k < t.weights.size(); ++k) {
      const uint8_t* src = wide.data() + (t.first + k) * line;
      float wk = t.weights[k];
      for (size_t i = 0; i < line; ++i) acc[i] += wk * src[i];
    }
    for (size_t i = 0; i < line; ++i) out[y * line + i] = static_cast<char>(sample(acc[i]));
  }
  return out;
}

prepared_image failed(prepared_image::outcome why) {
  prepared_image out;
  out.result = why;
  return out;
}

/// A JPEG: one within the limits goes as it came (its header read only,
/// as Codex sends it unchanged); a bigger one is decoded by libjpeg-turbo
/// (never stb_image: its JPEG decoder read and wrote out of bounds on
/// crafted files, prompt_image_fuzzer found two ways), scaled down and
/// encoded again as JPEG, as Codex does.
prepared_image prepare_jpeg(std::string_view bytes, const image_limits& limits) {
  using outcome = prepared_image::outcome;
  prepared_image out;
  if (!jpeg::read_size(bytes, out.source_width, out.source_height)) return failed(outcome::unreadable);
  if (uint64_t{out.source_width} * out.source_height > max_decoded_pixels)
    return failed(outcome::unreadable);
  auto [tw, th] = prompt_image_size(out.source_width, out.source_height, limits);
  out.width = tw;
  out.height = th;
  out.mime = "image/jpeg";
  if (tw == out.source_width && th == out.source_height) {
    out.result = outcome::ready;
    out.bytes = std::string(bytes);
    return out;
  }
  // The decoder's own buffers (a progressive file's coefficients: 128
  // bytes per 8x8 block and component) get what a genuine image needs.
  size_t memory = static_cast<size_t>(uint64_t{out.source_width} * out.source_height * 6 + (16u << 20));
  uint32_t dw = 0, dh = 0;
  auto decoded = jpeg::decode_rgb(bytes, tw, th, max_decoded_pixels, memory, dw, dh);
  if (decoded.empty()) return failed(outcome::unreadable);
  decoded = resize(decoded, dw, dh, 3, tw, th);
  out.bytes = stb::encode_jpeg(decoded, static_cast<int>(tw), static_cast<int>(th), 3, jpeg_quality);
  if (out.bytes.empty()) return failed(outcome::unreadable);
  out.result = outcome::ready;
  return out;
}

}  // namespace

std::pair<uint32_t, uint32_t> prompt_image_size(uint32_t width, uint32_t height,
                                                const image_limits& limits) {
  width = std::max<uint32_t>(width, 1);
  height = std::max<uint32_t>(height, 1);
  if (fits(width, height, limits)) return {width, height};
  double side = std::min(1.0, static_cast<double>(limits.max_dimension) / std::max(width, height));
  width = std::max<uint32_t>(1, static_cast<uint32_t>(std::lround(width * side)));
  height = std::max<uint32_t>(1, static_cast<uint32_t>(std::lround(height * side)));
  if (fits(width, height, limits)) return {width, height};
  // Over the patch budget: shrink by area, then round the patch grid down
  // so that whole patches stay within it (the Responses API's own sum).
  double w = width, h = height, p = patch_size;
  double scale = std::sqrt(p * p * static_cast<double>(limits.max_patches) / w / h);
  double wide = w * scale / p, high = h * scale / p;
  scale *= std::min(std::floor(wide) / wide, std::floor(high) / high);
  return {std::max<uint32_t>(1, static_cast<uint32_t>(std::floor(w * scale))),
          std::max<uint32_t>(1, static_cast<uint32_t>(std::floor(h * scale)))};
}

prepared_image prepare_prompt_image(std::string_view bytes, const image_limits& limits) {
  using outcome = prepared_image::outcome;
  if (bytes.size() > max_input_bytes) return failed(outcome::too_large);
  auto kind = format_of(bytes);
  if (kind == format::other) return failed(outcome::unreadable);
  prepared_image out;
  if (kind == format::webp) {
    // No WebP decoder: one within the limits goes as it came; a bigger one
    // cannot be scaled here and is left out.
    if (!webp_size(bytes, out.source_width, out.source_height)) return failed(outcome::unreadable);
    if (!fits(out.source_width, out.source_height, limits)) return failed(outcome::unreadable);
    out.result = outcome::ready;
    out.mime = "image/webp";
    out.bytes = std::string(bytes);
    out.width = out.source_width;
    out.height = out.source_height;
    return out;
  }
  if (kind == format::jpeg) return prepare_jpeg(bytes, limits);
  int w = 0, h = 0, channels = 0;
  if (!stb::info(bytes, w, h, channels) || w <= 0 || h <= 0) return failed(outcome::unreadable);
  uint64_t pixels = uint64_t(w) * uint64_t(h);
  if (pixels > max_decoded_pixels) return failed(outcome::unreadable);
  // Nor more pixels than its bytes can hold: no format packs more than a
  // few thousand pixels into a byte (deflate inflates a byte to at most
  // 1032; a 1-bit PNG makes that 8256 pixels), so a header claiming more
  // lies, and a small file cannot make the decoder fill a big buffer.
  if (pixels > uint64_t{bytes.size()} * max_pixels_per_byte) return failed(outcome::unreadable);
  // The decoder needs at most 8 bytes a pixel (16-bit RGBA) plus a filter
  // byte a row; no allocation of a genuine image is larger.
  size_t cap = static_cast<size_t>(pixels * 8 + uint64_t(h) + (1u << 20));
  int want = 4;
  int dw = 0, dh = 0;
  auto decoded = stb::decode(bytes, want, cap, dw, dh);
  if (decoded.empty() || dw != w || dh != h) return failed(outcome::unreadable);
  out.source_width = static_cast<uint32_t>(w);
  out.source_height = static_cast<uint32_t>(h);
  auto [tw, th] = prompt_image_size(out.source_width, out.source_height, limits);
  out.width = tw;
  out.height = th;
  bool resized = tw != out.source_width || th != out.source_height;
  if (!resized && kind == format::png) {
    out.result = outcome::ready;
    out.mime = "image/png";
    out.bytes = std::string(bytes);
    return out;
  }
  if (resized) {
    decoded = resize(decoded, static_cast<size_t>(w), static_cast<size_t>(h), static_cast<size_t>(want), tw, th);
  }
  out.bytes = stb::encode_png(decoded, static_cast<int>(tw), static_cast<int>(th), want);
  if (out.bytes.empty()) return failed(outcome::unreadable);
  out.result = outcome::ready;
  out.mime = "image/png";
  return out;
}

}  // namespace parley::protocol
