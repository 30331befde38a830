#include "sim/metrics.h"

#include <cstdio>

namespace sb::sim {
namespace {

std::string EscapeLabel(std::string_view v) {
  std::string out;
  for (const char c : v) {
    if (c == '\\' || c == '"') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string Float(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) {
    s += ".0";  // prometheus_client prints floats: "3.0"
  }
  return s;
}

class Writer {
 public:
  explicit Writer(std::string labels) : labels_(std::move(labels)) {}

  void Family(std::string_view name, std::string_view type, std::string_view help) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += help;
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }

  void Sample(std::string_view name, double value, std::string_view extra_labels = {}) {
    out_ += name;
    out_ += '{';
    out_ += labels_;
    if (!extra_labels.empty()) {
      out_ += ',';
      out_ += extra_labels;
    }
    out_ += "} ";
    out_ += Float(value);
    out_ += '\n';
  }

  std::string Take() { return std::move(out_); }

 private:
  std::string labels_;
  std::string out_;
};

double D(std::uint64_t v) {
  return static_cast<double>(v);
}

}  // namespace

std::string RenderPrometheus(const Counters& c, const SimOptions& options) {
  Writer w("model_name=\"" + EscapeLabel(options.model) + "\",engine=\"0\"");
  w.Family("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.");
  w.Sample("vllm:num_requests_running", c.running);
  w.Family("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.");
  w.Sample("vllm:num_requests_waiting", c.waiting);
  w.Family("vllm:prompt_tokens", "counter", "Number of prefill tokens processed.");
  w.Sample("vllm:prompt_tokens_total", D(c.prompt_tokens));
  w.Family("vllm:generation_tokens", "counter", "Number of generation tokens processed.");
  w.Sample("vllm:generation_tokens_total", D(c.generation_tokens));
  w.Family("vllm:request_success", "counter", "Count of successfully processed requests.");
  w.Sample("vllm:request_success_total", D(c.success_stop), "finished_reason=\"stop\"");
  w.Sample("vllm:request_success_total", D(c.success_length), "finished_reason=\"length\"");
  w.Sample("vllm:request_success_total", D(c.success_abort), "finished_reason=\"abort\"");
  if (options.prefix_cache_tokens > 0) {
    w.Family("vllm:prefix_cache_queries", "counter",
             "Prefix cache queries, in terms of number of queried tokens.");
    w.Sample("vllm:prefix_cache_queries_total", D(c.prefix_cache_queries));
    w.Family("vllm:prefix_cache_hits", "counter",
             "Prefix cache hits, in terms of number of cached tokens.");
    w.Sample("vllm:prefix_cache_hits_total", D(c.prefix_cache_hits));
  }
  if (options.spec_tokens > 0) {
    w.Family("vllm:spec_decode_num_drafts", "counter", "Number of spec decoding drafts.");
    w.Sample("vllm:spec_decode_num_drafts_total", D(c.drafts));
    w.Family("vllm:spec_decode_num_draft_tokens", "counter", "Number of draft tokens.");
    w.Sample("vllm:spec_decode_num_draft_tokens_total", D(c.draft_tokens));
    w.Family("vllm:spec_decode_num_accepted_tokens", "counter", "Number of accepted tokens.");
    w.Sample("vllm:spec_decode_num_accepted_tokens_total", D(c.accepted_tokens));
    w.Family("vllm:spec_decode_num_accepted_tokens_per_pos", "counter",
             "Accepted tokens per draft position.");
    for (std::size_t i = 0; i < c.accepted_per_pos.size(); ++i) {
      w.Sample("vllm:spec_decode_num_accepted_tokens_per_pos_total", D(c.accepted_per_pos[i]),
               "position=\"" + std::to_string(i) + "\"");
    }
  }
  w.Family("sim_requests", "counter", "HTTP requests parsed by the simulator.");
  w.Sample("sim_requests_total", D(c.requests));
  w.Family("sim_chat_requests", "counter", "Chat requests accepted for generation.");
  w.Sample("sim_chat_requests_total", D(c.chat_requests));
  w.Family("sim_max_running", "gauge", "Peak number of running requests.");
  w.Sample("sim_max_running", c.max_running);
  w.Family("sim_emits", "counter", "Token-bearing writes (one per decode step).");
  w.Sample("sim_emits_total", D(c.emits));
  w.Family("sim_emit_lag_max_seconds", "gauge", "Largest emission lateness (write - schedule).");
  w.Sample("sim_emit_lag_max_seconds", static_cast<double>(c.emit_lag_max_ns) / 1e9);
  w.Family("sim_emit_lag_mean_seconds", "gauge", "Mean emission lateness (write - schedule).");
  w.Sample("sim_emit_lag_mean_seconds",
           c.emits == 0 ? 0.0 : static_cast<double>(c.emit_lag_sum_ns) / D(c.emits) / 1e9);
  w.Family("sim_faults_injected", "counter", "Faults injected, by kind.");
  for (const Fault f : kAllFaults) {
    w.Sample("sim_faults_injected_total", D(c.faults[static_cast<int>(f)]),
             "kind=\"" + std::string(FaultName(f)) + "\"");
  }
  w.Family("sim_disconnects", "counter", "Chat requests dropped because the client went away.");
  w.Sample("sim_disconnects_total", D(c.disconnects));
  w.Family("sim_compressed_responses", "counter", "Responses sent gzip-compressed.");
  w.Sample("sim_compressed_responses_total", D(c.compressed_responses));
  w.Family("sim_loop_connections", "counter",
           "TCP connections accepted, by event loop (--threads).");
  for (std::size_t i = 0; i < c.loop_connections.size(); ++i) {
    w.Sample("sim_loop_connections_total", D(c.loop_connections[i]),
             "loop=\"" + std::to_string(i) + "\"");
  }
  return w.Take();
}

}  // namespace sb::sim
