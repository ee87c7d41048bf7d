#include "protocol/jpeg_codec.hpp"

#include <csetjmp>
#include <cstdio>  // jpeglib.h needs FILE and size_t first

#include <jerror.h>
#include <jpeglib.h>

namespace parley::protocol::jpeg {

namespace {

/// Scans a JPEG may have: a progressive file of thousands of tiny scans
/// makes the decoder do the whole image's work once per scan (libjpeg-turbo's
/// own TurboJPEG API offers the same bound, TJFLAG_LIMITSCANS, at 500).
constexpr int max_scans = 500;

/// libjpeg reports errors by calling error_exit, which must not return: it
/// jumps back to the call that set `escape`. Nothing with a destructor is
/// made between the setjmp and a jump (the callers below keep to that).
struct error_manager {
  jpeg_error_mgr base;
  std::jmp_buf escape;
};

[[noreturn]] void jump_out(j_common_ptr cinfo) {
  std::longjmp(reinterpret_cast<error_manager*>(cinfo->err)->escape, 1);
}

/// Warnings are not printed (stdout is the protocol, and a tool's file is
/// no news for stderr); one stands for an error: data that ends before the
/// image does, which libjpeg would fill with grey.
void on_message(j_common_ptr cinfo, int level) {
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) jump_out(cinfo);
}

/// A progressive file's scans are counted as they are read.
void limit_scans(j_common_ptr cinfo) {
  auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (cinfo->is_decompressor && d->input_scan_number > max_scans) jump_out(cinfo);
}

/// A decompressor reading `bytes`, its errors jumping out, its warnings
/// silent. (The error manager first: jpeg_create_decompress reports
/// through it.)
void start(jpeg_decompress_struct& cinfo, error_manager& errors, jpeg_progress_mgr& progress,
           std::string_view bytes) {
  cinfo.err = jpeg_std_error(&errors.base);
  errors.base.error_exit = jump_out;
  errors.base.emit_message = on_message;
  jpeg_create_decompress(&cinfo);
  progress.progress_monitor = limit_scans;
  cinfo.progress = &progress;
  jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(bytes.data()),
               static_cast<unsigned long>(bytes.size()));
}

/// The largest of libjpeg's denominators (8, 4, 2, 1) whose scaled size is
/// still at least the minimum.
unsigned denominator_for(uint32_t width, uint32_t height, uint32_t min_width, uint32_t min_height) {
  for (unsigned d : {8u, 4u, 2u}) {
    uint32_t w = (width + d - 1) / d, h = (height + d - 1) / d;
    if (w >= min_width && h >= min_height) return d;
  }
  return 1;
}

}  // namespace

bool read_size(std::string_view bytes, uint32_t& width, uint32_t& height) {
  jpeg_decompress_struct cinfo{};
  error_manager errors{};
  jpeg_progress_mgr progress{};
  if (setjmp(errors.escape)) {
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  start(cinfo, errors, progress, bytes);
  jpeg_read_header(&cinfo, TRUE);
  width = cinfo.image_width;
  height = cinfo.image_height;
  jpeg_destroy_decompress(&cinfo);
  return width > 0 && height > 0;
}

namespace {

/// decode_rgb's work, apart from the buffer it fills: the buffer belongs to
/// the caller, so that no object of this function's that a jump could
/// leave half-changed is used after it (only libjpeg's own struct, as
/// libjpeg's examples do).
bool decode_into(std::string& pixels, std::string_view bytes, uint32_t min_width, uint32_t min_height,
                 uint64_t max_pixels, size_t max_memory, uint32_t& width, uint32_t& height) {
  jpeg_decompress_struct cinfo{};
  error_manager errors{};
  jpeg_progress_mgr progress{};
  if (setjmp(errors.escape)) {
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  start(cinfo, errors, progress, bytes);
  cinfo.mem->max_memory_to_use = static_cast<long>(max_memory);
  jpeg_read_header(&cinfo, TRUE);
  if (uint64_t{cinfo.image_width} * cinfo.image_height > max_pixels)
    jump_out(reinterpret_cast<j_common_ptr>(&cinfo));
  cinfo.out_color_space = JCS_RGB;  // grey and YCbCr made RGB; CMYK does not decode
  cinfo.scale_num = 1;
  cinfo.scale_denom = denominator_for(cinfo.image_width, cinfo.image_height, min_width, min_height);
  jpeg_start_decompress(&cinfo);
  if (cinfo.output_components != 3) jump_out(reinterpret_cast<j_common_ptr>(&cinfo));
  size_t row = size_t{cinfo.output_width} * 3;
  pixels.resize(row * cinfo.output_height);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW at = reinterpret_cast<JSAMPROW>(&pixels[row * cinfo.output_scanline]);
    jpeg_read_scanlines(&cinfo, &at, 1);
  }
  jpeg_finish_decompress(&cinfo);
  width = cinfo.output_width;
  height = cinfo.output_height;
  jpeg_destroy_decompress(&cinfo);
  return true;
}

}  // namespace

std::string decode_rgb(std::string_view bytes, uint32_t min_width, uint32_t min_height,
                       uint64_t max_pixels, size_t max_memory, uint32_t& width, uint32_t& height) {
  std::string pixels;
  if (!decode_into(pixels, bytes, min_width, min_height, max_pixels, max_memory, width, height))
    return {};
  return pixels;
}

}  // namespace parley::protocol::jpeg
