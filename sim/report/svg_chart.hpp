#pragma once
/// Charts as inline SVG text for the HTML report (html_report.hpp): line and step charts, stacked
/// bars with a limit marker, a Gantt timeline and a scatter plot with a highlighted set. Output
/// is self-contained (no script, no external font or style: classes the page's CSS may refine,
/// with colours and sizes inline) and deterministic (fixed number formats, data order kept).
/// Every chart carries its `id` on the <svg> element; a chart without data still renders its
/// frame and says "no data", so a page always holds every chart it promises.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim::report::svg {

/// `text` with &, <, >, " and ' replaced by entities: safe in SVG/HTML text and attributes.
std::string escape(std::string_view text);

/// A value for a label: 3 significant digits with a k/M/G/T suffix from 1e3 on ("1.23k",
/// "45.6", "0.0012"); "0" for 0.
std::string short_number(double value);

/// The fill of series `index` of a chart (a fixed palette of 10 that distinguishable colours, cycled).
std::string_view colour(std::size_t index);

/// Evenly spaced "nice" tick values (steps of 1, 2 or 5 x 10^k) covering [low, high], about
/// `count` of them; {low} when high <= low.
std::vector<double> nice_ticks(double low, double high, int count = 5);

/// An axis: its label and unit, printed "label (unit)".
struct Axis {
  std::string label;
  std::string unit;
};

/// What every chart has: the <svg> id, a title, its axes, its size in pixels.
struct Frame {
  std::string id;
  std::string title;
  Axis x, y;
  int width = 760;
  int height = 300;  ///< of the plot and axes; a legend adds its rows below
};

/// One line of a LineChart: points (x[i], y[i]) in order; `step`: the value holds until the
/// next x (a step function), else straight segments.
struct LineSeries {
  std::string name;
  std::vector<double> x, y;
  bool step = false;
};

/// Lines over a common x axis; the y axis starts at 0 unless a value is negative; y_max > 0
/// fixes its top (e.g. 1 for fractions).
struct LineChart : Frame {
  std::vector<LineSeries> series;
  double y_max = 0;
};
std::string line_chart(const LineChart& chart);

/// A named part of every bar: values[i] for category i.
struct BarSegment {
  std::string name;
  std::vector<double> values;
};

/// One bar per category, its segments stacked bottom-up; limits (empty, or one per category:
/// a capacity) are drawn as a dashed red marker across the bar, named `limit_name` in the legend.
struct BarChart : Frame {
  std::vector<std::string> categories;
  std::vector<BarSegment> segments;
  std::vector<double> limits;
  std::string limit_name;
};
std::string bar_chart(const BarChart& chart);

/// One bar of a Gantt chart: [start, end) on row `row`, coloured by `kind`.
struct GanttBar {
  std::size_t row = 0;
  double start = 0, end = 0;
  std::size_t kind = 0;
};

/// Rows (a label each) of bars over time; `kinds` name the colours in the legend. Bars of one
/// row and kind closer than half a pixel are drawn as one (a step has hundreds of thousands of
/// kernels; the picture is the same and the file stays small). The chart's height follows the rows.
struct GanttChart : Frame {
  std::vector<std::string> rows;
  std::vector<std::string> kinds;
  std::vector<GanttBar> bars;
};
std::string gantt_chart(const GanttChart& chart);

/// A point of a ScatterChart; `label` is its hover text.
struct ScatterPoint {
  double x = 0, y = 0;
  bool highlighted = false;
  std::string label;
};

/// Points, the highlighted ones larger, in a second colour and joined by a line in x order
/// (a Pareto front), named in the legend.
struct ScatterChart : Frame {
  std::vector<ScatterPoint> points;
  std::string points_name = "points";
  std::string highlighted_name = "highlighted";
};
std::string scatter_chart(const ScatterChart& chart);

}  // namespace clustersim::report::svg
