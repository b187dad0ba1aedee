// Ordered-map histories in the binary form (traces/FORMAT.md, "Ordered maps
// in the binary form"): round trips with the JSON-lines form, every byte of a
// trace flipped, every cut, sections changed with their checksums made to
// match, and gfsl check and gfsl convert on both forms.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "linearizability/range_model.hpp"
#include "linearizability/range_synthetic.hpp"
#include "tests/gfsl_binary.hpp"
#include "traces/trace.hpp"

namespace {

using namespace gfsl::lin::ranges;
using gfsl::testing_cli::run;
using bytes_t = std::vector<unsigned char>;

std::string temp_path(const std::string& name) { return testing::TempDir() + "gfsl_range_binary_" + std::to_string(::getpid()) + "_" + name; }

void write_bytes(const std::string& path, const bytes_t& b) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

range_history varied_history(std::uint64_t seed, range_model m) {
  range_gen_options o;
  o.model = m;
  o.ops = 300;
  o.keys = 12;
  o.teams = 5;
  o.upsert_pct = m == range_model::ordered_upsert_map ? 15 : 0;
  o.snapshot_pct = 5;
  o.handle_read_pct = 30;
  o.pending_pct = 3;
  o.error_pct = 3;
  o.range_width = 6;
  o.seed = seed;
  range_history h = linearizable_range_history(o);
  // What the generator does not make: answers not recorded, a metadata line.
  for (std::size_t i = 0; i < h.ops.size(); i += 7) {
    range_record& r = h.ops[i];
    if (r.op == range_op::upsert) r.ok_known = false;
    if (r.op == range_op::erase && r.ok) r.value_known = false;
  }
  h.metadata = std::string("{\"format\":\"gfsl-history\",\"version\":1,\"model\":\"") + range_model_name(m) +
               "\",\"backend\":\"cuda\",\"teams\":5,\"rate\":0.5,\"delete_value\":true}";
  return h;
}

bool same(const range_history& a, const range_history& b) {
  if (a.ops.size() != b.ops.size()) return false;
  return range_trace_text(a) == range_trace_text(b);
}

TEST(RangeBinary, RoundTripsWithTheJsonLinesFormOnBothModels) {
  for (range_model m : {range_model::ordered_map, range_model::ordered_upsert_map}) {
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      const range_history h = varied_history(seed, m);
      const bytes_t b = range_trace_bytes(h);
      const range_history back = read_range_binary("t", b.data(), b.size(), m);
      EXPECT_TRUE(back.binary);
      ASSERT_TRUE(same(h, back)) << "seed " << seed;
      ASSERT_EQ(range_trace_bytes(back), b) << "seed " << seed;
      // Through files: JSON lines -> binary -> JSON lines gives the same text.
      const std::string json = temp_path("rt.jsonl"), bin = temp_path("rt.gfsl");
      write_range_trace(json, h);
      const range_history from_json = read_range_trace(json, m);
      write_range_trace_binary(bin, from_json);
      EXPECT_EQ(range_model_named(bin), range_model_name(m));
      EXPECT_EQ(range_model_named(json), range_model_name(m));
      const range_history from_bin = read_range_trace(bin, m);
      EXPECT_EQ(range_trace_text(from_bin), range_trace_text(from_json));
      std::remove(json.c_str());
      std::remove(bin.c_str());
    }
  }
}

// One line naming the file and a byte: "NAME: byte N: expected ...".
void expect_refused_in_one_line(const bytes_t& b, range_model m, const std::string& what) {
  try {
    read_range_binary("damaged", b.data(), b.size(), m);
    ADD_FAILURE() << what << ": read";
  } catch (const gfsl::traces::trace_error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("damaged: byte ", 0), 0u) << what << ": " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << what << ": " << msg;
  }
}

TEST(RangeBinary, EveryFlippedByteAndEveryCutIsRefusedNamingItsByte) {
  range_gen_options o;
  o.ops = 12;
  o.keys = 4;
  o.snapshot_pct = 10;
  o.handle_read_pct = 40;
  o.range_pct = 30;
  o.range_width = 3;
  o.seed = 9;
  const range_history h = linearizable_range_history(o);
  const bytes_t b = range_trace_bytes(h);
  for (std::size_t i = 0; i < b.size(); ++i) {
    for (unsigned char bit : {0x01, 0x80}) {
      bytes_t d = b;
      d[i] ^= bit;
      expect_refused_in_one_line(d, o.model, "byte " + std::to_string(i) + " flipped");
    }
  }
  for (std::size_t n = 0; n < b.size(); ++n) {
    expect_refused_in_one_line(bytes_t(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n)), o.model, "cut at " + std::to_string(n));
  }
  bytes_t longer = b;
  longer.push_back(0);
  expect_refused_in_one_line(longer, o.model, "a byte after the end section");
}

// Sections as (offset, length of the whole section with head and checksum).
std::vector<std::pair<std::size_t, std::size_t>> sections_of(const bytes_t& b) {
  std::vector<std::pair<std::size_t, std::size_t>> s;
  for (std::size_t p = 16; p + 16 <= b.size();) {
    std::uint64_t len = 0;
    for (int i = 7; i >= 0; --i) len = len << 8 | b[p + 8 + static_cast<std::size_t>(i)];
    s.emplace_back(p, 16 + len + 8);
    p += 16 + len + 8;
  }
  return s;
}

void reseal(bytes_t& b, std::size_t at) {
  std::uint32_t type = 0;
  std::uint64_t len = 0;
  for (int i = 3; i >= 0; --i) type = type << 8 | b[at + static_cast<std::size_t>(i)];
  for (int i = 7; i >= 0; --i) len = len << 8 | b[at + 8 + static_cast<std::size_t>(i)];
  const std::uint64_t sum = gfsl::traces::section_checksum(type, b.data() + at + 16, len);
  for (int i = 0; i < 8; ++i) b[at + 16 + len + static_cast<std::size_t>(i)] = static_cast<unsigned char>(sum >> (8 * i));
}

TEST(RangeBinary, SectionsChangedWithMatchingChecksumsAreRefused) {
  range_gen_options o;
  o.ops = 40;
  o.range_pct = 30;
  o.seed = 4;
  const range_history h = linearizable_range_history(o);
  const bytes_t b = range_trace_bytes(h);
  const auto s = sections_of(b);
  ASSERT_EQ(s.size(), 4u);  // header, records, pairs, end
  // The records' type made the plain history's (2), the checksum matching.
  bytes_t t = b;
  t[s[1].first] = 2;
  reseal(t, s[1].first);
  expect_refused_in_one_line(t, o.model, "type 7 -> 2");
  // An optional type: skipped, so the end section's count and chain refuse it.
  t = b;
  t[s[2].first + 3] = 0x80;
  reseal(t, s[2].first);
  expect_refused_in_one_line(t, o.model, "pairs made optional");
  // A range's pair count changed, resealed: the pairs no longer add up.
  t = b;
  bool changed = false;
  for (std::size_t r = 0; r < h.ops.size() && !changed; ++r) {
    if (h.ops[r].op != range_op::range) continue;
    const std::size_t at = s[1].first + 16 + 8 + 56 * r + 48;
    t[at] = static_cast<unsigned char>(t[at] + 1);
    changed = true;
  }
  ASSERT_TRUE(changed);
  reseal(t, s[1].first);
  expect_refused_in_one_line(t, o.model, "a pair count");
  // The pairs section removed; the records and pairs swapped.
  t.assign(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(s[2].first));
  t.insert(t.end(), b.begin() + static_cast<std::ptrdiff_t>(s[3].first), b.end());
  expect_refused_in_one_line(t, o.model, "pairs removed");
  t.assign(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(s[1].first));
  t.insert(t.end(), b.begin() + static_cast<std::ptrdiff_t>(s[2].first), b.begin() + static_cast<std::ptrdiff_t>(s[3].first));
  t.insert(t.end(), b.begin() + static_cast<std::ptrdiff_t>(s[1].first), b.begin() + static_cast<std::ptrdiff_t>(s[2].first));
  t.insert(t.end(), b.begin() + static_cast<std::ptrdiff_t>(s[3].first), b.end());
  expect_refused_in_one_line(t, o.model, "sections swapped");
  // The plain reader refuses the form in one line, naming what it holds.
  const std::string path = temp_path("plain.gfsl");
  write_bytes(path, b);
  try {
    gfsl::traces::read_trace(path);
    ADD_FAILURE() << "the plain reader read an ordered trace";
  } catch (const gfsl::traces::trace_error& e) {
    EXPECT_NE(std::string(e.what()).find("an ordered map's records"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

TEST(RangeBinary, GfslCheckAndConvertTakeEitherForm) {
  range_gen_options o;
  o.ops = 400;
  o.keys = 20;
  o.snapshot_pct = 5;
  o.handle_read_pct = 20;
  o.seed = 3;
  range_history h = linearizable_range_history(o);
  const std::string json = temp_path("c.jsonl"), bin = temp_path("c.gfsl"), back = temp_path("back.jsonl");
  write_range_trace(json, h);
  auto r = run("convert " + json + " " + bin);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("(JSON lines v1, 400 records) -> "), std::string::npos) << r.out;
  r = run("check " + bin);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("binary v3, model ordered-map"), std::string::npos) << r.out;
  EXPECT_EQ(run("check --model ordered-map " + bin).code, 0);
  r = run("check --model ordered-upsert-map " + bin);
  EXPECT_EQ(r.code, 2) << r.out;
  r = run("check --model upsert-map " + bin);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("names model ordered-map"), std::string::npos) << r.out;
  r = run("convert " + bin + " " + back);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(range_trace_text(read_range_trace(back, o.model)), range_trace_text(read_range_trace(json, o.model)));
  // A range missing one pair: not linearizable, from either form.
  for (range_record& x : h.ops) {
    if (x.op == range_op::range && !x.pending() && x.pairs_count > 0) {
      x.pairs_count -= 1;
      break;
    }
  }
  write_range_trace_binary(bin, h);
  r = run("check " + bin);
  EXPECT_EQ(r.code, 1) << r.out;
  // Damaged: one line on stderr with the byte, exit 2.
  std::ifstream f(bin, std::ios::binary);
  bytes_t b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  b[b.size() / 2] ^= 4;
  write_bytes(bin, b);
  r = run("check " + bin);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(": byte "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << r.out;
  b.resize(b.size() / 3);
  write_bytes(bin, b);
  r = run("check --model ordered-map " + bin);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(": byte "), std::string::npos) << r.out;
  r = run("convert " + bin + " " + back);
  EXPECT_EQ(r.code, 2) << r.out;
  for (const std::string& p : {json, bin, back}) std::remove(p.c_str());
}

}  // namespace
