// Images made ready for the model (protocol/prompt_image): Codex 0.169's
// sizes, its formats, and bytes that lie.
#include "protocol/prompt_image.hpp"

#include <gtest/gtest.h>

#include "protocol/jpeg_codec.hpp"
#include "protocol/stb_codecs.hpp"

namespace parley::protocol {
namespace prompt_image_tests {

using outcome = prepared_image::outcome;

/// RGBA pixels: the left half red, the right half blue.
std::string halves(int w, int h) {
  std::string px;
  px.reserve(static_cast<size_t>(w) * static_cast<size_t>(h) * 4);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) px += x < w / 2 ? std::string("\xff\x00\x00\xff", 4) : std::string("\x00\x00\xff\xff", 4);
  return px;
}

std::string png(int w, int h) { return stb::encode_png(halves(w, h), w, h, 4); }

void put32(std::string& s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + static_cast<size_t>(i)] = static_cast<char>(v >> (24 - 8 * i));
}

/// A PNG whose IHDR claims `w` x `h` over another image's pixel data.
std::string lying_png(const std::string& real, uint32_t w, uint32_t h) {
  auto lie = real;
  put32(lie, 16, w);
  put32(lie, 20, h);
  return lie;
}

TEST(PromptImage, SizesAreCodexs) {
  // As the real Codex 0.169 sent them (detail high: 2048 a side, 2500 patches).
  EXPECT_EQ(prompt_image_size(4000, 3000, high_detail_limits), std::make_pair(1824u, 1368u));
  EXPECT_EQ(prompt_image_size(1000, 5000, high_detail_limits), std::make_pair(410u, 2048u));
  EXPECT_EQ(prompt_image_size(3000, 3000, high_detail_limits), std::make_pair(1600u, 1600u));
  EXPECT_EQ(prompt_image_size(7000, 100, high_detail_limits), std::make_pair(2048u, 29u));
  // Within the limits: unchanged (1600 x 1600 is 2500 patches exactly).
  EXPECT_EQ(prompt_image_size(1600, 1600, high_detail_limits), std::make_pair(1600u, 1600u));
  EXPECT_EQ(prompt_image_size(300, 200, high_detail_limits), std::make_pair(300u, 200u));
  EXPECT_EQ(prompt_image_size(0, 0, high_detail_limits), std::make_pair(1u, 1u));
  // Whatever the size, the result fits.
  for (uint32_t w : {1u, 33u, 2049u, 4096u, 65535u})
    for (uint32_t h : {1u, 47u, 2048u, 9999u, 65535u}) {
      auto [tw, th] = prompt_image_size(w, h, high_detail_limits);
      EXPECT_LE(tw, 2048u);
      EXPECT_LE(th, 2048u);
      EXPECT_LE(uint64_t{(tw + 31) / 32} * ((th + 31) / 32), 2500u) << w << "x" << h;
      EXPECT_GE(tw, 1u);
      EXPECT_GE(th, 1u);
    }
}

TEST(PromptImage, ASmallPngGoesAsItCame) {
  auto bytes = png(64, 32);
  auto out = prepare_prompt_image(bytes, high_detail_limits);
  ASSERT_EQ(out.result, outcome::ready);
  EXPECT_EQ(out.mime, "image/png");
  EXPECT_EQ(out.bytes, bytes);
  EXPECT_EQ(out.width, 64u);
  EXPECT_EQ(out.source_height, 32u);
}

TEST(PromptImage, ABigPngIsScaledDownAndKeepsItsPicture) {
  auto out = prepare_prompt_image(png(4000, 3000), high_detail_limits);
  ASSERT_EQ(out.result, outcome::ready);
  EXPECT_EQ(out.mime, "image/png");
  EXPECT_EQ(out.source_width, 4000u);
  EXPECT_EQ(out.width, 1824u);
  EXPECT_EQ(out.height, 1368u);
  int w = 0, h = 0;
  auto px = stb::decode(out.bytes, 4, size_t{1} << 30, w, h);
  ASSERT_EQ(w, 1824);
  ASSERT_EQ(h, 1368);
  auto at = [&](int x, int y) { return px.substr((static_cast<size_t>(y) * 1824 + static_cast<size_t>(x)) * 4, 4); };
  EXPECT_EQ(at(10, 700), std::string("\xff\x00\x00\xff", 4));
  EXPECT_EQ(at(1800, 700), std::string("\x00\x00\xff\xff", 4));
}

TEST(PromptImage, AJpegStaysAJpegAndAGifBecomesAPng) {
  // A JPEG within the limits: as it came (its header read only).
  auto small = stb::encode_jpeg(halves(40, 20), 40, 20, 4, 90);
  auto kept = prepare_prompt_image(small, high_detail_limits);
  ASSERT_EQ(kept.result, outcome::ready);
  EXPECT_EQ(kept.mime, "image/jpeg");
  EXPECT_EQ(kept.bytes, small);
  EXPECT_EQ(kept.width, 40u);
  // A bigger one is decoded (libjpeg-turbo), scaled down and encoded again
  // as JPEG: 3000x1000 -> 2048x683, red on the left, blue on the right.
  auto big = stb::encode_jpeg(halves(3000, 1000), 3000, 1000, 4, 90);
  auto scaled = prepare_prompt_image(big, high_detail_limits);
  ASSERT_EQ(scaled.result, outcome::ready);
  EXPECT_EQ(scaled.mime, "image/jpeg");
  EXPECT_EQ(scaled.width, 2048u);
  EXPECT_EQ(scaled.height, 683u);
  uint32_t w = 0, h = 0;
  auto rgb = jpeg::decode_rgb(scaled.bytes, 1, 1, max_decoded_pixels, 64u << 20, w, h);
  ASSERT_FALSE(rgb.empty());
  EXPECT_EQ(w, 256u);  // decoded at 1/8: the smallest scale still 1x1 or more
  EXPECT_EQ(h, 86u);
  auto red_at = [&](uint32_t x, uint32_t y) { return static_cast<unsigned char>(rgb[(size_t{y} * w + x) * 3]); };
  auto blue_at = [&](uint32_t x, uint32_t y) { return static_cast<unsigned char>(rgb[(size_t{y} * w + x) * 3 + 2]); };
  EXPECT_GT(red_at(w / 8, h / 2), 200);
  EXPECT_LT(blue_at(w / 8, h / 2), 60);
  EXPECT_GT(blue_at(w - w / 8, h / 2), 200);
  EXPECT_LT(red_at(w - w / 8, h / 2), 60);
  // A greyscale one: the same, its pixels made RGB.
  auto grey = stb::encode_jpeg(std::string(size_t{3000} * 1000, '\x80'), 3000, 1000, 1, 90);
  auto grey_scaled = prepare_prompt_image(grey, high_detail_limits);
  ASSERT_EQ(grey_scaled.result, outcome::ready);
  EXPECT_EQ(grey_scaled.mime, "image/jpeg");
  EXPECT_EQ(grey_scaled.width, 2048u);
  // Cut short in its pixels: unreadable, and no message on stderr.
  EXPECT_EQ(prepare_prompt_image(big.substr(0, big.size() / 2), high_detail_limits).result,
            outcome::unreadable);
  // GIF87a, 1x1, one colour.
  std::string gif("GIF87a\x01\x00\x01\x00\x80\x00\x00\xff\x00\x00\x00\x00\x00"
                  ",\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02\x44\x01\x00;", 35);
  auto g = prepare_prompt_image(gif, high_detail_limits);
  ASSERT_EQ(g.result, outcome::ready);
  EXPECT_EQ(g.mime, "image/png");
  EXPECT_EQ(g.bytes.substr(1, 3), "PNG");
}

TEST(PromptImage, WebpGoesAsItCameWithinTheLimitsOnly) {
  // A VP8X header: canvas 100 x 50 (stored minus one, 24 bits each).
  std::string webp("RIFF\x00\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x00\x00\x00\x00"
                   "\x63\x00\x00\x31\x00\x00", 30);
  auto out = prepare_prompt_image(webp, high_detail_limits);
  ASSERT_EQ(out.result, outcome::ready);
  EXPECT_EQ(out.mime, "image/webp");
  EXPECT_EQ(out.width, 100u);
  EXPECT_EQ(out.height, 50u);
  webp[24] = '\xff';
  webp[25] = '\x1f';  // 8192 wide: no WebP decoder here to scale it
  EXPECT_EQ(prepare_prompt_image(webp, high_detail_limits).result, outcome::unreadable);
}

TEST(PromptImage, HostileBytesAreUnreadableWithoutTheMemoryTheyAskFor) {
  auto real = png(4000, 4000);  // one colour a half: compresses ~1000:1
  // Headers past every bound: refused before any pixel is decoded.
  EXPECT_EQ(prepare_prompt_image(lying_png(real, 100000, 100000), high_detail_limits).result,
            outcome::unreadable);
  EXPECT_EQ(prepare_prompt_image(lying_png(real, 60000, 60000), high_detail_limits).result,
            outcome::unreadable);
  // A small header over 64 MB of pixel data: the decoder may not take it.
  EXPECT_EQ(prepare_prompt_image(lying_png(real, 1000, 1000), high_detail_limits).result,
            outcome::unreadable);
  // A big header over a few bytes of data: more pixels than so few bytes
  // can hold, refused before the decoder allocates them (a GIF's decoder
  // would fill three buffers of the claimed size first).
  EXPECT_EQ(prepare_prompt_image(lying_png(png(8, 8), 6000, 6000), high_detail_limits).result,
            outcome::unreadable);
  std::string gif("GIF87a\x70\x17\x70\x17\x80\x00\x00\xff\x00\x00\x00\x00\x00"
                  ",\x00\x00\x00\x00\x70\x17\x70\x17\x00\x02\x02\x44\x01\x00;", 35);
  EXPECT_EQ(prepare_prompt_image(gif, high_detail_limits).result, outcome::unreadable);
  // A JPEG whose Huffman table claims more than 256 codes (stb_image 2.27
  // wrote past its table's arrays; libjpeg-turbo refuses the table).
  auto jpeg = stb::encode_jpeg(halves(16, 16), 16, 16, 4, 90);
  auto dht = jpeg.find("\xff\xc4");
  ASSERT_NE(dht, std::string::npos);
  EXPECT_EQ(prepare_prompt_image(jpeg, high_detail_limits).result, outcome::ready);
  for (size_t k = 5; k < 21; ++k) jpeg[dht + k] = '\x20';  // 16 lengths x 32 codes
  EXPECT_EQ(prepare_prompt_image(jpeg, high_detail_limits).result, outcome::unreadable);
  // Cut short, or no image at all.
  EXPECT_EQ(prepare_prompt_image(real.substr(0, real.size() / 2), high_detail_limits).result,
            outcome::unreadable);
  EXPECT_EQ(prepare_prompt_image(real.substr(0, 24), high_detail_limits).result, outcome::unreadable);
  EXPECT_EQ(prepare_prompt_image("\x89PNG\r\n\x1a\nnot really", high_detail_limits).result,
            outcome::unreadable);
  EXPECT_EQ(prepare_prompt_image("plain text", high_detail_limits).result, outcome::unreadable);
  EXPECT_EQ(prepare_prompt_image("", high_detail_limits).result, outcome::unreadable);
}

}  // namespace prompt_image_tests
}  // namespace parley::protocol
