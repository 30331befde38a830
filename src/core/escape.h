// The one escaping function for markup: HTML pages, SVG charts, JUnit XML, the store's HTML
// tables and pango markup all escape text through it.
#pragma once

#include <string>
#include <string_view>

namespace sb {

// Text or an attribute value (double or single quoted) in XML or HTML: & < > " ' become
// entities; characters XML 1.0 does not allow (C0 controls other than tab, LF and CR) and DEL
// become a space, so a model id with an ESC in it cannot make a page invalid.
std::string XmlEscape(std::string_view text);

}  // namespace sb
