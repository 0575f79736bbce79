// The SVG chart helpers: escaping, number labels, ticks, empty data, determinism and the
// Gantt chart's merging of touching bars.
#include "sim/report/svg_chart.hpp"

#include <doctest/doctest.h>

#include <string>

namespace svg_chart_test {

namespace svg = clustersim::report::svg;

namespace {

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t found = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++found;
  return found;
}

svg::LineChart one_line(const std::string& name) {
  svg::LineChart chart;
  chart.id = "chart-x";
  chart.title = "T & <t>";
  chart.x = {"time", "ms"};
  chart.y = {"load", "%"};
  chart.series.push_back({name, {0, 1, 2}, {10, 30, 20}, true});
  return chart;
}

}  // namespace

TEST_CASE("escape replaces the five XML specials and keeps the rest") {
  CHECK(svg::escape(R"(<a & 'b' "c">)") == "&lt;a &amp; &#39;b&#39; &quot;c&quot;&gt;");
  CHECK(svg::escape("GPU 3 · stage 1") == "GPU 3 · stage 1");
  CHECK(svg::escape("") == "");
}

TEST_CASE("short numbers keep 3 significant digits with an SI suffix") {
  CHECK(svg::short_number(0) == "0");
  CHECK(svg::short_number(45.6) == "45.6");
  CHECK(svg::short_number(1234) == "1.23k");
  CHECK(svg::short_number(2.5e9) == "2.5G");
  CHECK(svg::short_number(-3e6) == "-3M");
  CHECK(svg::short_number(0.00123) == "0.00123");
}

TEST_CASE("nice ticks step by 1, 2 or 5 times a power of ten and cover the range") {
  CHECK(svg::nice_ticks(0, 10) == std::vector<double>{0, 2, 4, 6, 8, 10});
  const auto fractions = svg::nice_ticks(0, 0.9);
  REQUIRE(fractions.size() == 6);
  CHECK(fractions[1] == doctest::Approx(0.2));
  CHECK(fractions.back() == doctest::Approx(1.0));
  CHECK(svg::nice_ticks(3, 3) == std::vector<double>{3});
}

TEST_CASE("names and titles are escaped inside the SVG") {
  const std::string out = svg::line_chart(one_line("<script>alert('x')</script>"));
  CHECK(out.find("<script>") == std::string::npos);
  CHECK(out.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;") != std::string::npos);
  CHECK(out.find("T &amp; &lt;t&gt;") != std::string::npos);
  CHECK(out.find(R"(<svg id="chart-x")") == 0);
  CHECK(out.find("load (%)") != std::string::npos);  // the axis title with its unit
}

TEST_CASE("a step series holds each value until the next x") {
  const std::string out = svg::line_chart(one_line("s"));
  // Three points and two holding corners.
  const auto points = out.substr(out.find("points=\"") + 8);
  CHECK(count(points.substr(0, points.find('"')), ",") == 5);
}

TEST_CASE("every chart without data keeps its id and says so") {
  svg::LineChart line;
  line.id = "chart-empty-line";
  svg::BarChart bar;
  bar.id = "chart-empty-bar";
  svg::GanttChart gantt;
  gantt.id = "chart-empty-gantt";
  svg::ScatterChart scatter;
  scatter.id = "chart-empty-scatter";
  for (const std::string& out : {svg::line_chart(line), svg::bar_chart(bar), svg::gantt_chart(gantt), svg::scatter_chart(scatter)}) {
    CHECK(out.find("class=\"no-data\"") != std::string::npos);
    CHECK(out.find("nan") == std::string::npos);
    CHECK(out.find("inf") == std::string::npos);
    CHECK(out.ends_with("</svg>"));
  }
  CHECK(svg::line_chart(line).find("id=\"chart-empty-line\"") != std::string::npos);
}

TEST_CASE("the same chart renders the same bytes") {
  svg::ScatterChart chart;
  chart.id = "chart-p";
  chart.points = {{1, 2, true, "a"}, {2, 1, true, "b"}, {2, 2.5, false, "c"}};
  CHECK(svg::scatter_chart(chart) == svg::scatter_chart(chart));
  CHECK(count(svg::scatter_chart(chart), "<circle") == 3);
  CHECK(count(svg::scatter_chart(chart), "class=\"front\"") == 1);  // two highlighted points joined
}

TEST_CASE("Gantt bars of one row and kind closer than half a pixel are drawn as one") {
  svg::GanttChart chart;
  chart.id = "chart-g";
  chart.rows = {"GPU 0 stage 0 compute"};
  chart.kinds = {"compute"};
  chart.bars = {{0, 0.0, 1.0, 0}, {0, 1.0000001, 2.0, 0}};
  const std::size_t touching = count(svg::gantt_chart(chart), "<rect");
  chart.bars = {{0, 0.0, 0.5, 0}, {0, 1.5, 2.0, 0}};
  const std::size_t apart = count(svg::gantt_chart(chart), "<rect");
  CHECK(apart == touching + 1);
}

TEST_CASE("stacked bars draw the limit marker and a legend entry for it") {
  svg::BarChart chart;
  chart.id = "chart-m";
  chart.categories = {"stage 0", "stage 1"};
  chart.segments = {{"weights", {10, 12}}, {"activations", {20, 0}}};
  chart.limits = {80, 80};
  chart.limit_name = "HBM capacity";
  const std::string out = svg::bar_chart(chart);
  CHECK(count(out, "class=\"limit\"") == 2);
  CHECK(out.find(">HBM capacity<") != std::string::npos);
  CHECK(count(out, "<title>stage ") == 3);  // stage 1's 0 GiB of activations draws nothing
}

}  // namespace svg_chart_test
