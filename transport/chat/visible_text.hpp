#pragma once
// Text from the model or the server, made safe to print on a terminal.
//
// `parley chat` asks a person to approve a command, a path or a diff, and
// what they approve must be what they see. Printed raw, the text could steer
// the terminal instead: `ls #\e[2K\r\e[1Aecho harmless` erases itself and
// shows `echo harmless`, `\e[8m` hides whatever follows, U+202E (right-to-left
// override) shows `txt.exe` as `exe.txt`, and zero-width characters hide text
// in plain sight. So every such text goes through visible_text() before it
// is printed: what could act on the terminal or hide is shown as an escape.

#include <string>
#include <string_view>

namespace parley {

/// What a text keeps of its layout.
enum class text_layout {
  /// A field on one line (a command, a path, a cwd, a reason, an id):
  /// newline and tab are escaped too. A newline in a command runs a second
  /// command, so it must not look like a line break of the prompt.
  one_line,
  /// Prose and file contents (a diff's line, an agent message, command
  /// output): newline and tab are kept as they are.
  lines,
};

/// How the escapes are marked: as text only, or also in reverse video
/// (for a terminal with colours).
enum class escape_style { plain, highlighted };

/// `text` with every byte or character that could act on the terminal or
/// disguise text replaced by a visible escape:
///   - C0 controls and DEL: `\e` (ESC), `\r`, `\n`, `\t`, `\a`, `\b`, `\v`,
///     `\f`, else `\xNN` (`\x00`, `\x7f`);
///   - C1 controls (U+0080..U+009F), bidi embeddings, overrides, isolates
///     and marks, zero-width and other invisible format characters, the line
///     and paragraph separators and the tag characters: `<U+202E>`;
///   - each byte that is not part of valid UTF-8: `\xNN`.
/// Everything else (ASCII, and UTF-8 such as "café" or CJK) is unchanged, a
/// backslash included, so a text with nothing to escape is printed exactly
/// as it is: visible_text(t) == t tells that nothing was escaped.
std::string visible_text(std::string_view text, text_layout layout = text_layout::one_line,
                         escape_style style = escape_style::plain);

}  // namespace parley
