#pragma once
// The stb image decoder and encoders behind one narrow interface
// (stb_codecs.cpp compiles them, alone: their implementation is a header
// that must be compiled once). Every allocation the decoder makes is
// refused past the cap the caller sets.

#include <cstddef>
#include <string>
#include <string_view>

namespace parley::protocol::stb {

/// The size and channels a header claims, without decoding pixels.
bool info(std::string_view bytes, int& width, int& height, int& channels);

/// The pixels (`channels` a pixel, 8 bits each), or empty when the image
/// does not decode or would need an allocation over `alloc_cap` bytes.
std::string decode(std::string_view bytes, int channels, size_t alloc_cap, int& width, int& height);

std::string encode_png(const std::string& pixels, int width, int height, int channels);
std::string encode_jpeg(const std::string& pixels, int width, int height, int channels, int quality);

}  // namespace parley::protocol::stb
