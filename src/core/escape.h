// The escaping of text for what servebench writes: XmlEscape for HTML pages, SVG charts, JUnit
// XML, the store's HTML tables and pango markup; MarkdownCell and MarkdownInline for every
// Markdown table and line (reports, compare, the store's tables, the roofline).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sb {

// Text or an attribute value (double or single quoted) in XML or HTML: & < > " ' become
// entities; characters XML 1.0 does not allow (C0 controls other than tab, LF and CR) and DEL
// become a space, so a model id with an ESC in it cannot make a page invalid.
std::string XmlEscape(std::string_view text);

// Makes text safe inside a Markdown table cell: '|' and '<' are backslash-escaped, line breaks
// and other control characters (ESC, NUL, DEL, C1) become spaces, and text longer than max_chars
// (UTF-8 aware) is cut with "…".
std::string MarkdownCell(std::string_view text, std::size_t max_chars = 200);

// MarkdownCell (uncut), and the characters that would start or end emphasis, code or a link
// ('\\', '*', '_', '`', '[', ']') backslash-escaped: a user's text inside **bold** stays text.
std::string MarkdownInline(std::string_view text);

}  // namespace sb
