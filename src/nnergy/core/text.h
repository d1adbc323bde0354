#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nnergy {

/// `text` without leading and trailing blanks (space, tab, CR, LF). A view into `text`.
std::string_view trim(std::string_view text);

/// `text` cut at every `separator`, each piece trimmed; an empty `text` gives one empty piece,
/// so that "a,,b" gives {"a", "", "b"} and callers can name the empty item.
std::vector<std::string> split_trimmed(std::string_view text, char separator);

/// `text` with the ASCII letters A-Z in lower case; other bytes (UTF-8 included) unchanged.
std::string ascii_lower(std::string_view text);

/// `text` with &, <, > and " written as entities, for text and attribute values in HTML and SVG.
std::string markup_escape(std::string_view text);

/// `text` safe to print on a terminal: ASCII control characters (0x00-0x1F, 0x7F: escape
/// sequences, OSC 52 clipboard writes, line breaks) written as "\xNN" and the UTF-8 C1
/// controls (U+0080-U+009F) as "\u00NN"; everything else unchanged. For names read from files.
std::string escape_control_characters(std::string_view text);

/// A duration for people, rounded to what matters at its size: "42 s", "3 min 05 s",
/// "2 h 10 min". A negative or non-finite duration reads "0 s".
std::string duration_text(double seconds);

}  // namespace nnergy
