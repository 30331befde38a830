// Test support: opens a local HTML file in headless Chromium (Debian's `chromium`) with its
// networking off, and reports what a reader's browser would have done: every console error,
// uncaught exception or error-level log entry (failed loads, blocked content), every request
// other than the page itself, and the value of a JavaScript expression evaluated in the page
// once it has loaded. Talks the DevTools protocol over --remote-debugging-pipe (file
// descriptors 3 and 4, NUL-separated JSON), so nothing listens on a port.
// Networking off: every proxied request goes to a closed local port and host resolution fails,
// so nothing can leave the machine even if a page asked.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sb::testing {

struct PageLoad {
  bool ok = false;                    // the page loaded and the expression was evaluated
  std::string failure;                // why not, when !ok
  std::vector<std::string> errors;    // console errors, exceptions, error-level log entries
  std::vector<std::string> requests;  // every URL requested besides the page (data: excluded)
  nlohmann::json value;               // the expression's value (returned by value)
};

// The chromium binary: $SERVEBENCH_CHROMIUM, else chromium or chromium-browser on PATH;
// empty when none.
std::string FindChromium();

// Loads `page` (an absolute path) and evaluates `expression` in it. `color_scheme` ("light",
// "dark" or empty for the browser's default) is the prefers-color-scheme the page sees.
PageLoad LoadPage(const std::filesystem::path& page, const std::string& expression,
                  std::chrono::seconds limit = std::chrono::seconds(60),
                  const std::string& color_scheme = "");

}  // namespace sb::testing
