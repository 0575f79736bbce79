#include "sim/report/svg_chart.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include <fmt/format.h>

namespace clustersim::report::svg {
namespace {

constexpr std::array<std::string_view, 10> kPalette = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                                       "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr std::string_view kLimitColour = "#c0392b";
constexpr double kLeft = 72, kRight = 24, kTop = 34, kBottom = 46;
constexpr double kLegendRow = 18;
constexpr double kCharWidth = 6.6;  ///< average advance of the 11 px sans-serif labels

/// "label (unit)", or the label alone.
std::string axis_title(const Axis& axis) {
  return axis.unit.empty() ? axis.label : fmt::format("{} ({})", axis.label, axis.unit);
}

/// Pixel coordinates, two decimals: enough for any screen, and stable text.
std::string px(double value) { return fmt::format("{:.2f}", value); }

/// The plot area of a chart and its data ranges.
struct Plot {
  double left = kLeft, top = kTop, width = 0, height = 0;
  double x_low = 0, x_high = 1, y_low = 0, y_high = 1;
  double x(double value) const { return left + (value - x_low) / (x_high - x_low) * width; }
  double y(double value) const { return top + height - (value - y_low) / (y_high - y_low) * height; }
};

/// A legend entry: a swatch (filled box, or a dashed line) and its name.
struct LegendItem {
  std::string name;
  std::string_view colour;
  bool line = false;
};

/// Lays the items out left to right from `left`, wrapping at `right`; returns the rows used.
int legend_rows(const std::vector<LegendItem>& items, double left, double right) {
  int rows = items.empty() ? 0 : 1;
  double at = left;
  for (const LegendItem& item : items) {
    const double width = 22 + kCharWidth * static_cast<double>(item.name.size()) + 14;
    if (at + width > right && at > left) {
      ++rows;
      at = left;
    }
    at += width;
  }
  return rows;
}

std::string legend(const std::vector<LegendItem>& items, double left, double right, double top) {
  std::string out = "<g class=\"legend\">";
  double at = left, y = top;
  for (const LegendItem& item : items) {
    const double width = 22 + kCharWidth * static_cast<double>(item.name.size()) + 14;
    if (at + width > right && at > left) {
      at = left;
      y += kLegendRow;
    }
    if (item.line) {
      out += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="2" stroke-dasharray="5 3"/>)",
                         px(at), px(y + 6), px(at + 16), px(y + 6), item.colour);
    } else {
      out += fmt::format(R"(<rect x="{}" y="{}" width="12" height="12" fill="{}"/>)", px(at), px(y), item.colour);
    }
    out += fmt::format(R"(<text x="{}" y="{}" font-size="11">{}</text>)", px(at + 20), px(y + 10), escape(item.name));
    at += width;
  }
  return out + "</g>";
}

/// The <svg> opening with its id, size, accessible name and title line.
std::string open_svg(const Frame& frame, double height) {
  return fmt::format(
      R"(<svg id="{0}" class="chart" xmlns="http://www.w3.org/2000/svg" width="{1}" height="{2}" )"
      R"(viewBox="0 0 {1} {2}" role="img" aria-label="{3}" font-family="sans-serif">)"
      R"(<title>{3}</title><rect width="{1}" height="{2}" fill="#ffffff"/>)"
      R"(<text x="{4}" y="20" font-size="14" font-weight="bold" fill="#222">{3}</text>)",
      escape(frame.id), frame.width, px(height), escape(frame.title), px(kLeft));
}

/// Grid lines and tick labels at `x_ticks` / `y_ticks`, the axis lines and their titles.
std::string axes(const Plot& plot, const Frame& frame, const std::vector<double>& x_ticks,
                 const std::vector<double>& y_ticks) {
  std::string out = R"(<g class="axes" font-size="11" fill="#444">)";
  for (const double tick : y_ticks) {
    const double y = plot.y(tick);
    out += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#e3e3e3"/>)", px(plot.left), px(y),
                       px(plot.left + plot.width), px(y));
    out += fmt::format(R"(<text x="{}" y="{}" text-anchor="end">{}</text>)", px(plot.left - 6), px(y + 4),
                       short_number(tick));
  }
  for (const double tick : x_ticks) {
    const double x = plot.x(tick);
    out += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#999"/>)", px(x), px(plot.top + plot.height),
                       px(x), px(plot.top + plot.height + 4));
    out += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">{}</text>)", px(x), px(plot.top + plot.height + 16),
                       short_number(tick));
  }
  out += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#888"/>)", px(plot.left),
                     px(plot.top), px(plot.width), px(plot.height));
  out += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">{}</text>)", px(plot.left + plot.width / 2),
                     px(plot.top + plot.height + 34), escape(axis_title(frame.x)));
  out += fmt::format(R"svg(<text transform="translate(14,{}) rotate(-90)" text-anchor="middle">{}</text>)svg",
                     px(plot.top + plot.height / 2), escape(axis_title(frame.y)));
  return out + "</g>";
}

std::string no_data(const Plot& plot) {
  return fmt::format(R"(<text class="no-data" x="{}" y="{}" text-anchor="middle" font-size="13" fill="#888">no data</text>)",
                     px(plot.left + plot.width / 2), px(plot.top + plot.height / 2));
}

/// A plot of the frame's size with room for `legend_items` below the x axis; returns the
/// plot and the SVG's total height.
std::pair<Plot, double> layout(const Frame& frame, const std::vector<LegendItem>& legend_items, double left = kLeft) {
  Plot plot;
  plot.left = left;
  plot.width = std::max(40.0, frame.width - left - kRight);
  plot.height = std::max(40.0, frame.height - kTop - kBottom);
  const int rows = legend_rows(legend_items, left, frame.width - kRight);
  return {plot, frame.height + rows * kLegendRow + (rows > 0 ? 6 : 0)};
}

/// [low, high] extended to nice ticks; a degenerate range gets a unit of room.
std::vector<double> range_ticks(double& low, double& high) {
  if (!(high > low)) high = low + (low == 0 ? 1 : std::abs(low));
  std::vector<double> ticks = nice_ticks(low, high);
  low = std::min(low, ticks.front());
  high = std::max(high, ticks.back());
  return ticks;
}

/// Extends both ranges to nice ticks, sets them on `plot` and draws its axes.
std::string fit_axes(Plot& plot, const Frame& frame, double x_low, double x_high, double y_low, double y_high) {
  const std::vector<double> x_ticks = range_ticks(x_low, x_high);
  const std::vector<double> y_ticks = range_ticks(y_low, y_high);
  plot.x_low = x_low;
  plot.x_high = x_high;
  plot.y_low = y_low;
  plot.y_high = y_high;
  return axes(plot, frame, x_ticks, y_ticks);
}

bool finite(double value) { return std::isfinite(value); }

}  // namespace

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string short_number(double value) {
  if (value == 0 || !std::isfinite(value)) return value == 0 ? "0" : fmt::format("{}", value);
  constexpr std::array<std::pair<double, const char*>, 4> kSuffixes = {
      {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}}};
  for (const auto& [scale, suffix] : kSuffixes) {
    if (std::abs(value) >= scale) return fmt::format("{:.3g}{}", value / scale, suffix);
  }
  return fmt::format("{:.3g}", value);
}

std::string_view colour(std::size_t index) { return kPalette[index % kPalette.size()]; }

std::vector<double> nice_ticks(double low, double high, int count) {
  if (!(high > low) || !finite(low) || !finite(high)) return {low};
  const double raw = (high - low) / std::max(1, count);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (const double factor : {1.0, 2.0, 5.0, 10.0}) {
    step = factor * magnitude;
    if (raw <= step) break;
  }
  std::vector<double> ticks;
  const double first = std::floor(low / step + 1e-9) * step;
  for (double tick = first; tick <= high + step * (1 - 1e-9); tick += step) {
    ticks.push_back(std::abs(tick) < step * 1e-9 ? 0.0 : tick);
    if (tick >= high - step * 1e-9) break;
  }
  return ticks;
}

std::string line_chart(const LineChart& chart) {
  std::vector<LegendItem> items;
  for (std::size_t s = 0; s < chart.series.size(); ++s) items.push_back({chart.series[s].name, colour(s)});
  auto [plot, height] = layout(chart, items);
  double x_low = std::numeric_limits<double>::infinity(), x_high = -x_low, y_low = 0, y_high = chart.y_max;
  bool any = false;
  for (const LineSeries& series : chart.series) {
    for (std::size_t i = 0; i < std::min(series.x.size(), series.y.size()); ++i) {
      if (!finite(series.x[i]) || !finite(series.y[i])) continue;
      any = true;
      x_low = std::min(x_low, series.x[i]);
      x_high = std::max(x_high, series.x[i]);
      y_low = std::min(y_low, series.y[i]);
      if (chart.y_max <= 0) y_high = std::max(y_high, series.y[i]);
    }
  }
  std::string out = open_svg(chart, height);
  if (!any) {
    x_low = 0;
    x_high = 1;
  }
  out += fit_axes(plot, chart, x_low, x_high, y_low, y_high);
  if (!any) out += no_data(plot);
  for (std::size_t s = 0; s < chart.series.size(); ++s) {
    const LineSeries& series = chart.series[s];
    std::string points;
    double held = 0;  // a step series' previous value, held until this x
    for (std::size_t i = 0; i < std::min(series.x.size(), series.y.size()); ++i) {
      if (!finite(series.x[i]) || !finite(series.y[i])) continue;
      if (series.step && !points.empty()) points += fmt::format("{},{} ", px(plot.x(series.x[i])), px(plot.y(held)));
      points += fmt::format("{},{} ", px(plot.x(series.x[i])), px(plot.y(series.y[i])));
      held = series.y[i];
    }
    if (points.empty()) continue;
    points.pop_back();
    out += fmt::format(R"(<polyline class="series" fill="none" stroke="{}" stroke-width="1.8" points="{}"><title>{}</title></polyline>)",
                       colour(s), points, escape(series.name));
  }
  out += legend(items, plot.left, chart.width - kRight, chart.height);
  return out + "</svg>";
}

std::string bar_chart(const BarChart& chart) {
  std::vector<LegendItem> items;
  for (std::size_t s = 0; s < chart.segments.size(); ++s) items.push_back({chart.segments[s].name, colour(s)});
  if (!chart.limits.empty()) items.push_back({chart.limit_name, kLimitColour, true});
  auto [plot, height] = layout(chart, items);
  const std::size_t n = chart.categories.size();
  double y_high = 0;
  for (std::size_t c = 0; c < n; ++c) {
    double total = 0;
    for (const BarSegment& segment : chart.segments) {
      if (c < segment.values.size() && finite(segment.values[c]) && segment.values[c] > 0) total += segment.values[c];
    }
    y_high = std::max(y_high, total);
    if (c < chart.limits.size() && finite(chart.limits[c])) y_high = std::max(y_high, chart.limits[c]);
  }
  double y_low = 0;
  const std::vector<double> y_ticks = range_ticks(y_low, y_high);
  plot.y_low = y_low;
  plot.y_high = y_high;
  std::string out = open_svg(chart, height) + axes(plot, chart, {}, y_ticks);
  if (n == 0) out += no_data(plot);
  const double slot = plot.width / static_cast<double>(std::max<std::size_t>(n, 1));
  const double bar = std::min(80.0, slot * 0.6);
  for (std::size_t c = 0; c < n; ++c) {
    const double centre = plot.left + slot * (static_cast<double>(c) + 0.5);
    double base = 0;
    for (std::size_t s = 0; s < chart.segments.size(); ++s) {
      const BarSegment& segment = chart.segments[s];
      const double value = c < segment.values.size() && finite(segment.values[c]) ? std::max(0.0, segment.values[c]) : 0;
      if (value == 0) continue;
      const double top = plot.y(base + value);
      out += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}: {} {}</title></rect>)",
                         px(centre - bar / 2), px(top), px(bar), px(plot.y(base) - top), colour(s),
                         escape(chart.categories[c] + " " + segment.name), short_number(value), escape(chart.y.unit));
      base += value;
    }
    if (c < chart.limits.size() && finite(chart.limits[c])) {
      const double y = plot.y(chart.limits[c]);
      out += fmt::format(
          R"(<line class="limit" x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="2" stroke-dasharray="5 3"><title>{}: {} {}</title></line>)",
          px(centre - bar / 2 - 6), px(y), px(centre + bar / 2 + 6), px(y), kLimitColour, escape(chart.limit_name),
          short_number(chart.limits[c]), escape(chart.y.unit));
    }
    out += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle" font-size="11" fill="#444">{}</text>)", px(centre),
                       px(plot.top + plot.height + 16), escape(chart.categories[c]));
  }
  out += legend(items, plot.left, chart.width - kRight, chart.height);
  return out + "</svg>";
}

std::string gantt_chart(const GanttChart& chart) {
  std::vector<LegendItem> items;
  for (std::size_t k = 0; k < chart.kinds.size(); ++k) items.push_back({chart.kinds[k], colour(k)});
  constexpr double kRowHeight = 18;
  std::size_t longest = 0;
  for (const std::string& row : chart.rows) longest = std::max(longest, row.size());
  const double left = std::clamp(kCharWidth * static_cast<double>(longest) + 14, kLeft, 260.0);
  Frame frame = chart;
  frame.height = static_cast<int>(kTop + kBottom + kRowHeight * static_cast<double>(std::max<std::size_t>(chart.rows.size(), 2)));
  auto [plot, height] = layout(frame, items, left);
  double x_low = 0, x_high = 0;
  for (const GanttBar& bar : chart.bars) x_high = std::max(x_high, bar.end);
  const std::vector<double> x_ticks = range_ticks(x_low, x_high);
  plot.x_low = x_low;
  plot.x_high = x_high;
  std::string out = open_svg(frame, height) + axes(plot, frame, x_ticks, {});
  if (chart.bars.empty()) out += no_data(plot);
  for (std::size_t r = 0; r < chart.rows.size(); ++r) {
    const double y = plot.top + kRowHeight * static_cast<double>(r);
    out += fmt::format(R"(<text x="{}" y="{}" text-anchor="end" font-size="11" fill="#444">{}</text>)", px(plot.left - 6),
                       px(y + 13), escape(chart.rows[r]));
  }
  // Merge bars of one (row, kind) that touch within half a pixel, in start order.
  std::map<std::pair<std::size_t, std::size_t>, std::vector<std::pair<double, double>>> spans;
  for (const GanttBar& bar : chart.bars) {
    if (bar.row < chart.rows.size() && finite(bar.start) && finite(bar.end) && bar.end >= bar.start) {
      spans[{bar.row, bar.kind}].emplace_back(bar.start, bar.end);
    }
  }
  const double half_pixel = (plot.x_high - plot.x_low) / plot.width / 2;
  for (auto& [key, list] : spans) {
    std::sort(list.begin(), list.end());
    std::vector<std::pair<double, double>> merged;
    for (const auto& span : list) {
      if (!merged.empty() && span.first <= merged.back().second + half_pixel) {
        merged.back().second = std::max(merged.back().second, span.second);
      } else {
        merged.push_back(span);
      }
    }
    const double y = plot.top + kRowHeight * static_cast<double>(key.first) + 3;
    for (const auto& [start, end] : merged) {
      const double x0 = plot.x(start);
      out += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}"/>)", px(x0), px(y),
                         px(std::max(0.6, plot.x(end) - x0)), px(kRowHeight - 6), colour(key.second));
    }
  }
  out += legend(items, plot.left, frame.width - kRight, frame.height);
  return out + "</svg>";
}

std::string scatter_chart(const ScatterChart& chart) {
  const std::vector<LegendItem> items = {{chart.points_name, colour(0)}, {chart.highlighted_name, colour(1)}};
  auto [plot, height] = layout(chart, items);
  double x_low = std::numeric_limits<double>::infinity(), x_high = -x_low;
  double y_low = x_low, y_high = x_high;
  std::vector<const ScatterPoint*> shown, front;
  for (const ScatterPoint& point : chart.points) {
    if (!finite(point.x) || !finite(point.y)) continue;
    shown.push_back(&point);
    if (point.highlighted) front.push_back(&point);
    x_low = std::min(x_low, point.x);
    x_high = std::max(x_high, point.x);
    y_low = std::min(y_low, point.y);
    y_high = std::max(y_high, point.y);
  }
  if (shown.empty()) {
    x_low = y_low = 0;
    x_high = y_high = 1;
  }
  // Room around the extreme points so their markers stay inside the frame.
  const double x_pad = (x_high - x_low) * 0.05, y_pad = (y_high - y_low) * 0.05;
  x_low -= x_pad;
  x_high += x_pad;
  y_low -= y_pad;
  y_high += y_pad;
  std::string out = open_svg(chart, height) + fit_axes(plot, chart, x_low, x_high, y_low, y_high);
  if (shown.empty()) out += no_data(plot);
  std::stable_sort(front.begin(), front.end(), [](const ScatterPoint* a, const ScatterPoint* b) { return a->x < b->x; });
  if (front.size() > 1) {
    std::string points;
    for (const ScatterPoint* point : front) points += fmt::format("{},{} ", px(plot.x(point->x)), px(plot.y(point->y)));
    points.pop_back();
    out += fmt::format(R"(<polyline class="front" fill="none" stroke="{}" stroke-width="1.5" points="{}"/>)", colour(1),
                       points);
  }
  for (const bool highlighted : {false, true}) {  // the front drawn last, on top
    for (const ScatterPoint* point : shown) {
      if (point->highlighted != highlighted) continue;
      out += fmt::format(R"(<circle cx="{}" cy="{}" r="{}" fill="{}" fill-opacity="0.85"><title>{}</title></circle>)",
                         px(plot.x(point->x)), px(plot.y(point->y)), highlighted ? 5.5 : 3.5,
                         colour(highlighted ? 1 : 0), escape(point->label));
    }
  }
  out += legend(items, plot.left, chart.width - kRight, chart.height);
  return out + "</svg>";
}

}  // namespace clustersim::report::svg
