// The stb image decoder and writer, compiled once, with only the formats
// parley reads (PNG, JPEG, GIF, BMP), no file I/O, and allocations that
// fail past a per-call cap: a header that lies about its size, or a deflate
// stream that inflates far past it, ends the decode instead of taking the
// memory.
#include "protocol/stb_codecs.hpp"

#include <cstdlib>

namespace {

thread_local size_t stb_alloc_cap = 0;

void* capped_malloc(size_t size) { return size > stb_alloc_cap ? nullptr : std::malloc(size); }

void* capped_realloc(void* p, size_t size) {
  return size > stb_alloc_cap ? nullptr : std::realloc(p, size);
}

}  // namespace

// stb's own code casts the C way; its warnings are about stb, not parley.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wcast-qual"
#pragma GCC diagnostic ignored "-Wunused-function"
#define STBI_MALLOC(sz) capped_malloc(sz)
#define STBI_REALLOC(p, newsz) capped_realloc(p, newsz)
#define STBI_FREE(p) std::free(p)
#define STBI_NO_STDIO
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_ONLY_GIF
#define STBI_ONLY_BMP
#define STBI_MAX_DIMENSIONS (1 << 16)
#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>

#define STBI_WRITE_NO_STDIO
#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>
#pragma GCC diagnostic pop

namespace parley::protocol::stb {

namespace {

const stbi_uc* data_of(std::string_view bytes) { return reinterpret_cast<const stbi_uc*>(bytes.data()); }

void append(void* context, void* data, int size) {
  static_cast<std::string*>(context)->append(static_cast<const char*>(data), static_cast<size_t>(size));
}

}  // namespace

bool info(std::string_view bytes, int& width, int& height, int& channels) {
  if (bytes.size() > static_cast<size_t>(INT32_MAX)) return false;
  // Reading a header allocates a little (the GIF reader its state).
  stb_alloc_cap = size_t{1} << 20;
  bool ok = stbi_info_from_memory(data_of(bytes), static_cast<int>(bytes.size()), &width, &height,
                                  &channels) != 0;
  stb_alloc_cap = 0;
  return ok;
}

std::string decode(std::string_view bytes, int channels, size_t alloc_cap, int& width, int& height) {
  if (bytes.size() > static_cast<size_t>(INT32_MAX)) return {};
  stb_alloc_cap = alloc_cap;
  int found = 0;
  stbi_uc* pixels = stbi_load_from_memory(data_of(bytes), static_cast<int>(bytes.size()), &width,
                                          &height, &found, channels);
  stb_alloc_cap = 0;
  if (!pixels) return {};
  std::string out(reinterpret_cast<const char*>(pixels),
                  static_cast<size_t>(width) * static_cast<size_t>(height) * static_cast<size_t>(channels));
  stbi_image_free(pixels);
  return out;
}

std::string encode_png(const std::string& pixels, int width, int height, int channels) {
  std::string out;
  if (!stbi_write_png_to_func(append, &out, width, height, channels, pixels.data(), width * channels))
    return {};
  return out;
}

std::string encode_jpeg(const std::string& pixels, int width, int height, int channels, int quality) {
  std::string out;
  if (!stbi_write_jpg_to_func(append, &out, width, height, channels, pixels.data(), quality)) return {};
  return out;
}

}  // namespace parley::protocol::stb
