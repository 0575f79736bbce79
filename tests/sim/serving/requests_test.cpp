// The request generator: arrival processes, length distributions, prefixes, traces; seeded.
#include "sim/serving/requests.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <vector>

#include "sim/engine/error.hpp"

namespace requests_test {

using namespace clustersim;
using namespace clustersim::serving;

namespace {

std::vector<Request> all(RequestGenerator& generator) {
  std::vector<Request> out;
  while (auto r = generator.next()) out.push_back(*r);
  return out;
}

std::vector<double> gaps(const std::vector<Request>& requests) {
  std::vector<double> out;
  for (std::size_t i = 1; i < requests.size(); ++i) out.push_back(requests[i].arrival_s - requests[i - 1].arrival_s);
  return out;
}

LengthSpec length(LengthKind kind, double value = 128, double min = 1, double max = 1e9) {
  LengthSpec spec;
  spec.kind = kind;
  spec.value = value;
  spec.min = min;
  spec.max = max;
  return spec;
}

double mean(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()); }

double cv(const std::vector<double>& v) {
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size())) / m;
}

std::filesystem::path write_file(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("poisson, gamma and constant arrivals have the rate and burstiness asked for") {
  RequestsSpec spec;
  spec.count = 20000;
  spec.arrival.rate_per_s = 50;
  RequestGenerator poisson(spec, 7);
  const auto p = all(poisson);
  REQUIRE(p.size() == 20000);
  CHECK(mean(gaps(p)) == doctest::Approx(1.0 / 50).epsilon(0.03));
  CHECK(cv(gaps(p)) == doctest::Approx(1.0).epsilon(0.05));
  spec.arrival.process = ArrivalProcess::gamma;
  spec.arrival.cv = 3;
  RequestGenerator gamma(spec, 7);
  const auto g = gaps(all(gamma));
  CHECK(mean(g) == doctest::Approx(1.0 / 50).epsilon(0.08));
  CHECK(cv(g) == doctest::Approx(3.0).epsilon(0.1));
  spec.arrival.process = ArrivalProcess::constant;
  RequestGenerator constant(spec, 7);
  const auto c = all(constant);
  CHECK(c.front().arrival_s == 0);
  CHECK(c[10].arrival_s == doctest::Approx(10.0 / 50));
  spec.arrival.process = ArrivalProcess::offline;
  RequestGenerator offline(spec, 7);
  for (const Request& r : all(offline)) CHECK(r.arrival_s == 0);
}

TEST_CASE("a ramp's arrival rate rises from rate to rate_end over ramp_duration, then stays") {
  RequestsSpec spec;
  spec.count = 100000;
  spec.arrival = {ArrivalProcess::ramp, 10, 1, 100, 100, 1, 0};
  RequestGenerator ramp(spec, 3);
  const auto r = all(ramp);
  const auto count_in = [&](double from, double to) {
    return std::count_if(r.begin(), r.end(), [&](const Request& q) { return q.arrival_s >= from && q.arrival_s < to; });
  };
  // Expected counts: the integral of r(t) = 10 + 0.9 t over the window.
  CHECK(static_cast<double>(count_in(0, 10)) == doctest::Approx(145).epsilon(0.2));
  CHECK(static_cast<double>(count_in(90, 100)) == doctest::Approx(955).epsilon(0.08));
  CHECK(static_cast<double>(count_in(100, 110)) == doctest::Approx(1000).epsilon(0.08));
}

TEST_CASE("length distributions: fixed, uniform, normal, lognormal with their moments, clamped; empirical") {
  std::mt19937_64 rng(1);
  const auto sample = [&](const LengthSpec& spec) {
    LengthSampler sampler(spec);
    std::vector<double> v;
    for (int i = 0; i < 20000; ++i) v.push_back(static_cast<double>(sampler.draw(rng)));
    return v;
  };
  CHECK(sample(length(LengthKind::fixed, 77)).front() == 77);
  LengthSpec uniform = length(LengthKind::uniform);
  uniform.min = 10;
  uniform.max = 20;
  const auto u = sample(uniform);
  CHECK(*std::min_element(u.begin(), u.end()) == 10);
  CHECK(*std::max_element(u.begin(), u.end()) == 20);
  CHECK(mean(u) == doctest::Approx(15).epsilon(0.02));
  LengthSpec lognormal = length(LengthKind::lognormal);
  lognormal.mean = 500;
  lognormal.stddev = 300;
  const auto l = sample(lognormal);
  CHECK(mean(l) == doctest::Approx(500).epsilon(0.03));
  CHECK(cv(l) == doctest::Approx(0.6).epsilon(0.08));
  LengthSpec normal = length(LengthKind::normal);
  normal.mean = 200;
  normal.stddev = 50;
  normal.max = 220;
  const auto n = sample(normal);
  CHECK(*std::max_element(n.begin(), n.end()) == 220);  // clamped
  LengthSpec empirical = length(LengthKind::empirical);
  empirical.file = write_file("cs_lengths.csv", "length,weight\n100,1\n300,3\n").string();
  CHECK(mean(sample(empirical)) == doctest::Approx(250).epsilon(0.02));
  empirical.file = write_file("cs_lengths_bad.csv", "100\nabc\n").string();
  CHECK_THROWS_WITH_AS(LengthSampler{empirical}, doctest::Contains("cs_lengths_bad.csv:2: column 1"), ConfigError);
  lognormal.mean = 0;
  CHECK_THROWS_AS(LengthSampler{lognormal}, ConfigError);
}

TEST_CASE("the same seed gives the same requests; lengths do not depend on the arrival process") {
  RequestsSpec spec;
  spec.count = 100;
  spec.input = length(LengthKind::uniform, 0, 1, 1000);
  RequestGenerator a(spec, 11), b(spec, 11), c(spec, 12);
  const auto ra = all(a), rb = all(b), rc = all(c);
  CHECK(ra.back().arrival_s == rb.back().arrival_s);
  CHECK(ra[5].input_tokens == rb[5].input_tokens);
  CHECK(ra.back().arrival_s != rc.back().arrival_s);
  spec.arrival.process = ArrivalProcess::constant;
  RequestGenerator d(spec, 11);
  const auto rd = all(d);
  for (std::size_t i = 0; i < ra.size(); ++i) CHECK(rd[i].input_tokens == ra[i].input_tokens);
}

TEST_CASE("system prompts and closed-loop sessions: each turn's prefix is the conversation so far") {
  RequestsSpec spec;
  spec.count = 12;
  spec.prefix = {3, 200, 1};
  RequestGenerator groups(spec, 1);
  for (const Request& r : all(groups)) {
    CHECK(r.prefix_id >= 0);
    CHECK(r.prefix_id < 3);
    CHECK(r.prefix_tokens == 200);
    CHECK(r.input_tokens == 128 + 200);
    CHECK(r.reusable_tokens == 200);
  }
  spec.prefix = {0, 0, 3};
  spec.arrival.process = ArrivalProcess::closed_loop;
  spec.arrival.clients = 2;
  RequestGenerator sessions(spec, 1);
  const auto first = sessions.initial_clients();
  REQUIRE(first.size() == 2);
  CHECK(first[0].prefix_tokens == 0);
  const auto second = sessions.next_for_client(first[0].client, 5.0);
  REQUIRE(second);
  CHECK(second->arrival_s == 5.0);  // no think time
  CHECK(second->prefix_id == first[0].prefix_id);
  CHECK(second->prefix_tokens == first[0].input_tokens + first[0].output_tokens);
  CHECK(second->input_tokens == second->prefix_tokens + 128);
  const auto third = sessions.next_for_client(first[0].client, 6.0);
  const auto fourth = sessions.next_for_client(first[0].client, 7.0);  // a new session after 3 turns
  CHECK(third->prefix_id == first[0].prefix_id);
  CHECK(fourth->prefix_id != first[0].prefix_id);
  CHECK(fourth->prefix_tokens == 0);
  spec.arrival.process = ArrivalProcess::poisson;
  CHECK_THROWS_WITH_AS(RequestGenerator(spec, 1), doctest::Contains("closed_loop"), ConfigError);
}

TEST_CASE("a trace is replayed row by row; bad rows name file, line and column") {
  RequestsSpec spec;
  spec.arrival.process = ArrivalProcess::trace;
  spec.count = 0;
  spec.trace_file = write_file("cs_trace.csv", "input_tokens,output_tokens,arrival_s,prefix_id\n10,5,0.5,2\n20,6,1.5,-1\n").string();
  RequestGenerator trace(spec, 1);
  const auto rows = all(trace);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].arrival_s == 0.5);
  CHECK(rows[0].input_tokens == 10);
  CHECK(rows[0].prefix_id == 2);
  CHECK(rows[1].output_tokens == 6);
  spec.trace_file = write_file("cs_trace_bad.csv", "arrival_s,input_tokens,output_tokens\n1,10,5\n0.5,x,5\n").string();
  CHECK_THROWS_WITH_AS(RequestGenerator(spec, 1), doctest::Contains("cs_trace_bad.csv:3: column 2 (input_tokens)"),
                       ConfigError);
  spec.trace_file = write_file("cs_trace_order.csv", "arrival_s,input_tokens,output_tokens\n1,10,5\n0.5,10,5\n").string();
  CHECK_THROWS_WITH_AS(RequestGenerator(spec, 1), doctest::Contains("arrivals must not decrease"), ConfigError);
  spec.trace_file = write_file("cs_trace_header.csv", "time,in,out\n").string();
  CHECK_THROWS_WITH_AS(RequestGenerator(spec, 1), doctest::Contains("must name arrival_s"), ConfigError);
}

}  // namespace requests_test
