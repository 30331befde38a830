#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "launch/launch.h"

namespace sb::launch {
namespace {

std::vector<Recipe> ParseOk(std::string_view yaml) {
  auto r = ParseRecipes(yaml, "t.yaml");
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? r.value() : std::vector<Recipe>{};
}

std::string ParseError(std::string_view yaml) {
  auto r = ParseRecipes(yaml, "t.yaml");
  EXPECT_FALSE(r.has_value()) << yaml;
  if (r) {
    return "";
  }
  EXPECT_EQ(r.error().code, ErrorCode::kUsage);
  return r.error().message;
}

TEST(RecipeTest, SingleRecipeWithEveryKey) {
  auto recipes = ParseOk(R"(
name: qwen-fp8
command: vllm serve Qwen/Qwen3-8B-FP8 --host {host} --port {port}
env:
  VLLM_USE_V1: 1
  CUDA_VISIBLE_DEVICES: "0,1"
host: 0.0.0.0
port: 0
endpoint: http://{host}:{port}/v1
ready_path: /ping
ready_timeout_s: 1200
poll_interval_s: 0.25
stop_timeout_s: 5
cwd: /tmp
)");
  ASSERT_EQ(recipes.size(), 1u);
  const Recipe& r = recipes[0];
  EXPECT_EQ(r.name, "qwen-fp8");
  EXPECT_EQ(r.command, "vllm serve Qwen/Qwen3-8B-FP8 --host {host} --port {port}");
  EXPECT_TRUE(r.argv.empty());
  ASSERT_EQ(r.env.size(), 2u);
  EXPECT_EQ(r.env[0], (std::pair<std::string, std::string>{"VLLM_USE_V1", "1"}));
  EXPECT_EQ(r.env[1], (std::pair<std::string, std::string>{"CUDA_VISIBLE_DEVICES", "0,1"}));
  EXPECT_EQ(r.host, "0.0.0.0");
  EXPECT_EQ(r.port, 0);
  EXPECT_EQ(r.endpoint, "http://{host}:{port}/v1");
  EXPECT_EQ(r.ready_path, "/ping");
  EXPECT_DOUBLE_EQ(r.ready_timeout_s, 1200);
  EXPECT_DOUBLE_EQ(r.poll_interval_s, 0.25);
  EXPECT_DOUBLE_EQ(r.stop_timeout_s, 5);
  EXPECT_EQ(r.cwd, "/tmp");
}

TEST(RecipeTest, SingleRecipeDefaults) {
  auto recipes = ParseOk("argv: [llama-server, -m, model.gguf, --port, '{port}']\n");
  ASSERT_EQ(recipes.size(), 1u);
  const Recipe& r = recipes[0];
  EXPECT_EQ(r.name, "serve");
  EXPECT_EQ(r.argv,
            (std::vector<std::string>{"llama-server", "-m", "model.gguf", "--port", "{port}"}));
  EXPECT_EQ(r.host, "127.0.0.1");
  EXPECT_EQ(r.port, 0);
  EXPECT_EQ(r.endpoint, "");
  EXPECT_EQ(r.ready_path, "");
  EXPECT_DOUBLE_EQ(r.ready_timeout_s, 900);
  EXPECT_DOUBLE_EQ(r.poll_interval_s, 0.5);
  EXPECT_DOUBLE_EQ(r.stop_timeout_s, 30);
}

TEST(RecipeTest, MatrixWithDefaults) {
  auto recipes = ParseOk(R"(
defaults:
  env: {VLLM_USE_V1: "1", HF_HOME: /data/hf}
  ready_timeout_s: 1800
  stop_timeout_s: 60
recipes:
  - name: bare
    command: vllm serve m --port {port}
  - name: mtp2
    command: >-
      vllm serve m --port {port}
      --speculative-config '{"method":"qwen3_next_mtp","num_speculative_tokens":2}'
    env: {HF_HOME: /other}
  - name: mtp3
    argv: [vllm, serve, m, --port, "{port}"]
    stop_timeout_s: 5
)");
  ASSERT_EQ(recipes.size(), 3u);
  EXPECT_EQ(recipes[0].name, "bare");
  EXPECT_EQ(recipes[1].name, "mtp2");
  EXPECT_EQ(recipes[2].name, "mtp3");
  for (const auto& r : recipes) {
    EXPECT_DOUBLE_EQ(r.ready_timeout_s, 1800) << r.name;
    ASSERT_EQ(r.env.size(), 2u) << r.name;
    EXPECT_EQ(r.env[0].first, "VLLM_USE_V1");
  }
  EXPECT_EQ(recipes[0].env[1].second, "/data/hf");
  EXPECT_EQ(recipes[1].env[1].second, "/other");  // merged per name, order kept
  EXPECT_EQ(recipes[1].command,
            "vllm serve m --port {port} --speculative-config "
            "'{\"method\":\"qwen3_next_mtp\",\"num_speculative_tokens\":2}'");
  EXPECT_DOUBLE_EQ(recipes[0].stop_timeout_s, 60);
  EXPECT_DOUBLE_EQ(recipes[2].stop_timeout_s, 5);
  EXPECT_EQ(recipes[2].argv.size(), 5u);
}

TEST(RecipeTest, SubstitutesOnlyPortAndHost) {
  EXPECT_EQ(Substitute("serve --host {host} --port {port} --x '{\"port\":1}' {ports} {port}",
                       "127.0.0.1", 8123),
            "serve --host 127.0.0.1 --port 8123 --x '{\"port\":1}' {ports} 8123");
  EXPECT_EQ(Substitute("{port}{host}", "h", 1), "1h");
  EXPECT_EQ(Substitute("", "h", 1), "");
  EXPECT_EQ(Substitute("{port", "h", 1), "{port");
}

TEST(RecipeTest, FromCommand) {
  Recipe r = RecipeFromCommand("vllm serve m --port {port}");
  EXPECT_EQ(r.name, "serve");
  EXPECT_EQ(r.command, "vllm serve m --port {port}");
  EXPECT_EQ(r.port, 0);
  EXPECT_TRUE(ValidateRecipe(r).has_value());
}

TEST(RecipeTest, PortTakenFromTheCommandLine) {
  EXPECT_EQ(RecipeFromCommand("vllm serve m --port 8010").port, 8010);
  EXPECT_EQ(RecipeFromCommand("llama-server -m x.gguf --port=8081 -ngl 99").port, 8081);
  EXPECT_EQ(RecipeFromCommand("CUDA_VISIBLE_DEVICES=1 sglang --port '30001'").port, 30001);
  EXPECT_EQ(ParseOk("argv: [vllm, serve, m, --port, '9001']\n")[0].port, 9001);
  // An explicit port wins; no port at all is a validation error.
  EXPECT_EQ(ParseOk("command: x --port 9001\nport: 9002\n")[0].port, 9002);
  Recipe none = RecipeFromCommand("ollama serve");
  EXPECT_EQ(none.port, 0);
  auto bad = ValidateRecipe(none);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, ErrorCode::kUsage);
  EXPECT_NE(bad.error().message.find("{port}"), std::string::npos) << bad.error().message;
  // {port} in the environment is enough (Ollama reads OLLAMA_HOST).
  EXPECT_TRUE(ParseOk("command: ollama serve\nenv: {OLLAMA_HOST: '127.0.0.1:{port}'}\n").size());
  // So is a fixed endpoint that does not depend on the port.
  EXPECT_TRUE(ParseOk("command: ./start.sh\nendpoint: http://127.0.0.1:9999/v1\n").size());
}

TEST(RecipeTest, ValidateRejects) {
  Recipe r = RecipeFromCommand("x --port {port}");
  r.argv = {"x"};
  EXPECT_FALSE(ValidateRecipe(r).has_value());  // both
  r = RecipeFromCommand("x --port {port}");
  r.name = "a/b";
  EXPECT_FALSE(ValidateRecipe(r).has_value());
  r = RecipeFromCommand("x --port {port}");
  r.env = {{"BAD-NAME", "1"}};
  EXPECT_FALSE(ValidateRecipe(r).has_value());
  r = RecipeFromCommand("x --port {port}");
  r.ready_timeout_s = 0;
  EXPECT_FALSE(ValidateRecipe(r).has_value());
  r = RecipeFromCommand("");
  EXPECT_FALSE(ValidateRecipe(r).has_value());
}

struct ErrorCase {
  const char* yaml;
  const char* expected;  // substring of the message, which starts with "t.yaml:LINE: "
};

TEST(RecipeTest, ErrorsNameTheLine) {
  const ErrorCase cases[] = {
      {"command: x --port {port}\nbogus: 1\n", "t.yaml:2: recipe: unknown key 'bogus'"},
      {"command: x --port {port}\nport: abc\n", "t.yaml:2: recipe: port must be an integer"},
      {"command: x --port {port}\nport: 70000\n", "t.yaml:2: recipe: port must be between"},
      {"command: x --port {port}\nport: -1\n", "t.yaml:2: recipe: port must be an integer"},
      {"command: [a, b]\n", "t.yaml:1: recipe: command must be a string"},
      {"command: x --port {port}\nready_timeout_s: soon\n",
       "t.yaml:2: recipe: ready_timeout_s must be a number of seconds"},
      {"command: x --port {port}\nstop_timeout_s: -3\n",
       "t.yaml:2: recipe: stop_timeout_s must be between 0 and 3600"},
      {"command: x --port {port}\nenv: [A, B]\n", "t.yaml:2: recipe: env must be a mapping"},
      {"command: x --port {port}\nenv:\n  A:\n", "t.yaml:3: recipe: env A must have a string"},
      {"command: x --port {port}\nenv:\n  A-B: 1\n", "t.yaml:3: recipe: env names must be"},
      {"command: x --port {port}\nargv: [x]\n", "t.yaml:1: recipe 'serve': give command or argv"},
      {"host: 127.0.0.1\n", "t.yaml:1: recipe 'serve': needs a command"},
      {"argv: []\n", "t.yaml:1: recipe: argv must be a non-empty list"},
      {"command: x --port {port}\nname: a/b\n", "t.yaml:2: recipe: name 'a/b' must be"},
      {"command: x --port {port}\nendpoint: 127.0.0.1:8000\n",
       "t.yaml:2: recipe: endpoint must start with http://"},
      {"command: x --port {port}\nready_path: health\n",
       "t.yaml:2: recipe: ready_path must start with '/'"},
      {"command: ollama serve\n", "t.yaml:1: recipe 'serve': port is 0"},
      {"command: x --port {port}\ncommand: y\n", "t.yaml:2: recipe: key 'command' appears twice"},
      {"- command: x\n", "t.yaml:1: expected a recipe mapping"},
      {"", "t.yaml:1: the file is empty"},
      {"command: [unclosed\n", "t.yaml:2: not valid YAML"},
      // Matrices.
      {"recipes:\n  - name: a\n    command: x {port}\n  - name: a\n    command: y {port}\n",
       "t.yaml:4: recipe name 'a' appears twice (first at line 2)"},
      {"recipes:\n  - command: x {port}\n", "t.yaml:2: recipe 1 has no name"},
      {"recipes:\n  - name: a\n    command: x {port}\n  - name: b\n",
       "t.yaml:4: recipe 'b': needs a command"},
      {"recipes:\n  - name: a\n    command: x {port}\n    speculative: 3\n",
       "t.yaml:4: recipe 1: unknown key 'speculative'"},
      {"recipes: {name: a}\n", "t.yaml:1: recipes must be a non-empty list"},
      {"recipes: []\n", "t.yaml:1: recipes must be a non-empty list"},
      {"recipes:\n  - just-a-string\n", "t.yaml:2: recipe 1 must be a mapping"},
      {"defaults:\n  port: 1\n", "t.yaml:1: matrix: 'recipes' (a list of recipes) is missing"},
      {"defaults:\n  command: x\nrecipes:\n  - name: a\n    command: y {port}\n",
       "t.yaml:2: defaults: unknown key 'command'"},
      {"defaults: 3\nrecipes:\n  - name: a\n    command: y {port}\n",
       "t.yaml:1: defaults must be a mapping"},
      {"defaults: {}\nrecipes:\n  - name: a\n    command: y {port}\nextra: 1\n",
       "t.yaml:5: matrix: unknown key 'extra'"},
      {"recipes:\n  - name: a\n    command: y {port}\n    port: x\n",
       "t.yaml:4: recipe 1: port must be an integer"},
  };
  for (const auto& c : cases) {
    const std::string message = ParseError(c.yaml);
    EXPECT_NE(message.find(c.expected), std::string::npos)
        << "yaml:\n"
        << c.yaml << "\nmessage: " << message << "\nexpected: " << c.expected;
  }
}

class RecipeFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("sb_launch_recipe_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_ / "work");
  }

  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path Write(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    std::ofstream(path) << text;
    return path;
  }

  std::filesystem::path dir_;
};

TEST_F(RecipeFileTest, SingleRecipeIsNamedAfterTheFileAndCwdIsRelativeToIt) {
  auto recipes = LoadRecipes(Write("qwen3-fp8.yaml", "command: x --port {port}\ncwd: work\n"));
  ASSERT_TRUE(recipes.has_value()) << recipes.error().message;
  ASSERT_EQ(recipes->size(), 1u);
  EXPECT_EQ(recipes.value()[0].name, "qwen3-fp8");
  EXPECT_EQ(recipes.value()[0].cwd, (dir_ / "work").string());
  // A stem that is not a valid name falls back to "serve"; an explicit name wins.
  EXPECT_EQ(LoadRecipes(Write("my recipe.yaml", "command: x {port}\n")).value()[0].name, "serve");
  EXPECT_EQ(LoadRecipes(Write("b.yaml", "name: n1\ncommand: x {port}\n")).value()[0].name, "n1");
}

TEST_F(RecipeFileTest, ErrorsNameTheFile) {
  const auto path = Write("m.yaml", "recipes:\n  - name: a\n    comand: x\n");
  auto recipes = LoadRecipes(path);
  ASSERT_FALSE(recipes.has_value());
  EXPECT_EQ(recipes.error().message.rfind(path.string() + ":3: recipe 1: unknown key 'comand'", 0),
            0u)
      << recipes.error().message;
  auto missing = LoadRecipes(dir_ / "none.yaml");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kSetup);
  EXPECT_NE(missing.error().message.find("none.yaml"), std::string::npos);
}

TEST_F(RecipeFileTest, TheDocumentedMatrixParses) {
  // docs/launch.md §2's example, kept in step with the documentation.
  std::ifstream in(std::filesystem::path(SB_SOURCE_DIR) / "docs" / "launch.md");
  ASSERT_TRUE(in) << "docs/launch.md";
  std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string open = "```yaml\n# matrix.yaml";
  const std::size_t start = doc.find(open);
  ASSERT_NE(start, std::string::npos);
  const std::size_t body = start + 8;
  const std::size_t end = doc.find("```", body);
  auto recipes = ParseRecipes(doc.substr(body, end - body), "docs/launch.md");
  ASSERT_TRUE(recipes.has_value()) << recipes.error().message;
  ASSERT_EQ(recipes->size(), 3u);
  EXPECT_EQ(recipes.value()[0].name, "bare");
  EXPECT_EQ(recipes.value()[1].name, "mtp2");
  EXPECT_EQ(recipes.value()[2].name, "mtp3");
  EXPECT_NE(recipes.value()[2].command.find("\"num_speculative_tokens\":3"), std::string::npos);
}

}  // namespace
}  // namespace sb::launch
