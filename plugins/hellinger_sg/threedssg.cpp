#include "threedssg.hpp"

#include <fmt/format.h>
#include <nexp/dataset.hpp>
#include <nexp/error.hpp>
#include <nexp/run_context.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

namespace hellinger_sg {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kGetRelease =
    "3DSSG needs a signed licence, so nexp cannot ship it: get the 3DSSG release and the 3RScan meshes "
    "(plugins/hellinger_sg/README.md, \"Data set hellinger_sg.3dssg\") and set dataset.root to the folder that holds "
    "3DSSG_subset/ and 3RScan/";
constexpr const char* kMesh = "labels.instances.annotated.v2.ply";

// A missing or malformed input: what (the file), where in it, what was expected, what was found, what to do.
[[noreturn]] void bad(const fs::path& file, const std::string& where, const std::string& expected,
                      const std::string& found, const std::string& todo = kGetRelease) {
  throw nexp::DataError(fmt::format("hellinger_sg.3dssg: {}{}: expected {}, found {}. {}", file.string(),
                                    where.empty() ? "" : " (" + where + ")", expected, found, todo));
}

std::string in_quotes(const std::string& s) { return "\"" + (s.size() > 80 ? s.substr(0, 80) + "..." : s) + "\""; }

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t a = 0;
  while (a < s.size() && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  return s.substr(a);
}

// One name a line; blank lines skipped.
std::vector<std::string> read_lines(const fs::path& file) {
  std::ifstream in(file);
  if (!in) bad(file, "", "a text file with one name a line", "no such file");
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (!trim(line).empty()) out.push_back(trim(line));
  if (out.empty()) bad(file, "", "one name a line", "an empty file");
  return out;
}

// ---------------------------------------------------------------- taxonomies

// 3DSSG has no class hierarchy: each class is its own group (the `hierarchy` context is then one-hot).
void add_class(Taxonomy& t, const std::string& name) {
  ClassInfo c;
  c.name = name;
  c.group = t.num_classes();
  t.classes.push_back(c);
  t.groups.push_back(name);
}

Taxonomy release_taxonomy(const fs::path& subset) {
  Taxonomy t;
  const fs::path classes = subset / "classes.txt", preds = subset / "relationships.txt";
  for (const auto& name : read_lines(classes)) {
    if (t.find_class(name) >= 0) bad(classes, "class " + in_quotes(name), "each class once", "it twice");
    add_class(t, name);
  }
  const auto names = read_lines(preds);
  if (names.front() != "none") bad(preds, "line 1", "\"none\" (predicate id 0)", in_quotes(names.front()));
  t.predicates.assign(names.begin() + 1, names.end());
  if (t.num_predicates() < 1 || t.num_predicates() > 32)
    bad(preds, "", "1 to 32 predicates after \"none\" (they are stored as a bit set)",
        std::to_string(t.num_predicates()));
  return t;
}

// NYU40 id -> the 20 ScanNet classes SGFN uses (ScanNet's benchmark classes).
const std::vector<std::pair<int, std::string>>& scannet20() {
  static const std::vector<std::pair<int, std::string>> c = {
      {1, "wall"},      {2, "floor"},    {3, "cabinet"},  {4, "bed"},       {5, "chair"},
      {6, "sofa"},      {7, "table"},    {8, "door"},     {9, "window"},    {10, "bookshelf"},
      {11, "picture"},  {12, "counter"}, {14, "desk"},    {16, "curtain"},  {24, "refrigerator"},
      {28, "shower curtain"}, {33, "toilet"}, {34, "sink"}, {36, "bathtub"}, {39, "otherfurniture"}};
  return c;
}

int scannet20_class(int nyu40) {
  for (std::size_t k = 0; k < scannet20().size(); ++k)
    if (scannet20()[k].first == nyu40) return static_cast<int>(k);
  return -1;
}

// ---------------------------------------------------------------- the instance mesh

struct PlyProperty {
  std::string type, name;
};

int ply_type_size(const std::string& t) {
  if (t == "char" || t == "uchar" || t == "int8" || t == "uint8") return 1;
  if (t == "short" || t == "ushort" || t == "int16" || t == "uint16") return 2;
  if (t == "int" || t == "uint" || t == "int32" || t == "uint32" || t == "float" || t == "float32") return 4;
  if (t == "double" || t == "float64") return 8;
  return 0;
}

// One binary little-endian value (x86 and ARM hosts are little-endian).
double ply_binary_value(const std::string& t, const unsigned char* b) {
  auto get = [b](auto v) {
    std::memcpy(&v, b, sizeof v);
    return static_cast<double>(v);
  };
  if (t == "char" || t == "int8") return get(std::int8_t{});
  if (t == "uchar" || t == "uint8") return get(std::uint8_t{});
  if (t == "short" || t == "int16") return get(std::int16_t{});
  if (t == "ushort" || t == "uint16") return get(std::uint16_t{});
  if (t == "int" || t == "int32") return get(std::int32_t{});
  if (t == "uint" || t == "uint32") return get(std::uint32_t{});
  if (t == "float" || t == "float32") return get(float{});
  return get(double{});
}

struct PlyHeader {
  bool ascii = true;
  std::int64_t vertices = -1;
  std::vector<PlyProperty> props;
  int line = 0;  // lines read
  int index(const std::string& name) const {
    for (std::size_t k = 0; k < props.size(); ++k)
      if (props[k].name == name) return static_cast<int>(k);
    return -1;
  }
};

PlyHeader read_ply_header(std::istream& in, const fs::path& file) {
  const std::string todo = "the file is not 3RScan's instance mesh or is cut short: download it again";
  PlyHeader h;
  std::string line, format;
  auto next = [&]() -> const std::string& {
    if (!std::getline(in, line)) bad(file, fmt::format("line {}", h.line + 1), "a PLY header ending in end_header",
                                     "the end of the file", todo);
    ++h.line;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return line;
  };
  if (next() != "ply") bad(file, "line 1", "\"ply\"", in_quotes(line), todo);
  bool in_vertex = false;
  while (next() != "end_header") {
    std::istringstream words(line);
    std::string key, a, b;
    words >> key >> a >> b;
    if (key == "format") {
      format = a;
    } else if (key == "element") {
      in_vertex = a == "vertex";
      if (!in_vertex && h.vertices < 0)
        bad(file, fmt::format("line {}", h.line), "the vertex element first", "element " + in_quotes(a), todo);
      if (in_vertex) h.vertices = std::atoll(b.c_str());
    } else if (key == "property" && in_vertex) {
      if (ply_type_size(a) == 0)
        bad(file, fmt::format("line {}", h.line), "a scalar vertex property (char ... double)", in_quotes(line), todo);
      h.props.push_back({a, b});
    }
  }
  if (format != "ascii" && format != "binary_little_endian")
    bad(file, "header", "format ascii or binary_little_endian", in_quotes(format), todo);
  h.ascii = format == "ascii";
  for (const char* name : {"x", "y", "z", "objectId"})
    if (h.index(name) < 0) bad(file, "header", std::string("a vertex property ") + name, "none", todo);
  return h;
}

}  // namespace

std::map<int, MeshInstance> read_instance_ply(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    bad(file, "", std::string("3RScan's ") + kMesh, "no such file",
        std::string("download it with 3RScan's script (--type ") + kMesh + ") into <root>/3RScan/<scan id>/");
  const PlyHeader h = read_ply_header(in, file);
  const int ix = h.index("x"), iy = h.index("y"), iz = h.index("z"), io = h.index("objectId"), inyu = h.index("NYU40");
  std::size_t bytes = 0;
  for (const auto& p : h.props) bytes += ply_type_size(p.type);
  std::vector<double> v(h.props.size());
  std::vector<unsigned char> buffer(bytes);
  std::map<int, MeshInstance> out;
  std::map<int, std::map<int, std::int64_t>> votes;  // instance -> NYU40 label -> vertices
  std::string line;
  int line_no = h.line;
  for (std::int64_t i = 0; i < h.vertices; ++i) {
    const std::string where = h.ascii ? fmt::format("line {}", line_no + 1) : fmt::format("vertex {}", i);
    const std::string expected = fmt::format("{} vertex values ({} vertices announced)", h.props.size(), h.vertices);
    if (h.ascii) {
      if (!std::getline(in, line)) bad(file, where, expected, "the end of the file");
      ++line_no;
      std::istringstream words(line);
      for (auto& x : v)
        if (!(words >> x)) bad(file, where, expected, in_quotes(trim(line)));
    } else {
      if (!in.read(reinterpret_cast<char*>(buffer.data()), static_cast<std::streamsize>(bytes)))
        bad(file, where, expected, "the end of the file");
      std::size_t at = 0;
      for (std::size_t k = 0; k < h.props.size(); ++k) {
        v[k] = ply_binary_value(h.props[k].type, buffer.data() + at);
        at += ply_type_size(h.props[k].type);
      }
    }
    const int id = static_cast<int>(v[io]);
    if (id == 0) continue;  // not annotated
    out[id].points.push_back({static_cast<float>(v[ix]), static_cast<float>(v[iy]), static_cast<float>(v[iz])});
    if (inyu >= 0) ++votes[id][static_cast<int>(v[inyu])];
  }
  for (auto& [id, inst] : out)
    if (votes.count(id))
      inst.nyu40 = std::max_element(votes[id].begin(), votes[id].end(), [](const auto& a, const auto& b) {
                     return a.second < b.second;
                   })->first;  // the most frequent; ties: the smallest label
  return out;
}

Taxonomy sgfn_taxonomy() {
  Taxonomy t;
  for (const auto& [nyu, name] : scannet20()) add_class(t, name);
  t.predicates = {"supported by", "attached to", "standing on", "hanging on", "connected to", "part of", "build in",
                  "same part"};
  return t;
}

namespace {

// ---------------------------------------------------------------- relationships.json

// One sub-graph of relationships.json.
struct Entry {
  std::size_t index = 0;  // in the file's "scans" array
  std::string scan;
  const json* value = nullptr;
  bool train = false;
};

int as_int(const json& j, const fs::path& file, const std::string& where) {
  if (j.is_number_integer()) return j.get<int>();
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (!s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      return std::stoi(s);
  }
  bad(file, where, "an integer", j.dump());
}

struct Reader {
  const ThreeDssgOptions& o;
  const Taxonomy& t;
  fs::path file;  // relationships.json
  std::size_t dropped_objects = 0;

  // Class of an object in the label set, or -1.
  int class_of(const std::string& label, const MeshInstance& m) const {
    return o.label_set == 160 ? t.find_class(label) : scannet20_class(m.nyu40);
  }

  // The bit of a relationship [s, o, id, name] in the label set, or -1 (a predicate outside it).
  int bit_of(int id, const std::string& name, const std::string& where) const {
    if (o.label_set == 20) {
      const auto it = std::find(t.predicates.begin(), t.predicates.end(), name);
      return it == t.predicates.end() ? -1 : static_cast<int>(it - t.predicates.begin());
    }
    if (id < 1 || id > t.num_predicates())
      bad(file, where, fmt::format("a predicate id in [1, {}] (a line of relationships.txt after \"none\")",
                                   t.num_predicates()),
          std::to_string(id));
    if (t.predicates[id - 1] != name)
      bad(file, where, fmt::format("predicate {} to be {} as in relationships.txt", id, in_quotes(t.predicates[id - 1])),
          in_quotes(name), "relationships.json and relationships.txt come from different releases: use the pair of one");
    return id - 1;
  }

  // The scene of one sub-graph; nullopt when fewer than two of its objects are left.
  std::optional<Scene> scene(const Entry& e, const std::map<int, MeshInstance>& mesh, nexp::Random& rng) {
    const json& j = *e.value;
    const std::string at = fmt::format("scans[{}] (scan {})", e.index, e.scan);
    Scene s;
    std::map<int, int> node;  // object id -> node
    std::map<int, std::string> objects;
    const json& listed = j.at("objects");
    for (auto it = listed.begin(); it != listed.end(); ++it) {
      if (!it.value().is_string()) bad(file, at + ".objects." + it.key(), "a class name", it.value().dump());
      objects[as_int(json(it.key()), file, at + ".objects")] = it.value().get<std::string>();
    }
    for (const auto& [id, label] : objects) {
      const auto m = mesh.find(id);
      const int c = m == mesh.end() ? -1 : class_of(label, m->second);
      if (c < 0) {
        ++dropped_objects;
        continue;
      }
      node[id] = s.nodes();
      s.classes.push_back(c);
      add_object(s, m->second, rng);
    }
    if (s.nodes() < 2) return std::nullopt;
    std::map<std::pair<int, int>, std::uint32_t> bits;
    const json& rels = j.at("relationships");
    for (std::size_t k = 0; k < rels.size(); ++k) {
      const std::string where = fmt::format("{}.relationships[{}]", at, k);
      const json& r = rels[k];
      if (!r.is_array() || r.size() < 4 || !r[3].is_string())
        bad(file, where, "[subject id, object id, predicate id, \"predicate\"]", r.dump());
      const int a = as_int(r[0], file, where), b = as_int(r[1], file, where);
      for (int id : {a, b})
        if (!objects.count(id)) bad(file, where, "object ids listed in this entry's \"objects\"", std::to_string(id));
      const int bit = bit_of(as_int(r[2], file, where), r[3].get<std::string>(), where);
      if (bit >= 0 && a != b && node.count(a) && node.count(b)) bits[{node[a], node[b]}] |= 1u << bit;
    }
    for (int i = 0; i < s.nodes(); ++i)
      for (int k = 0; k < s.nodes(); ++k)
        if (i != k) {
          s.edges.push_back({i, k});
          const auto it = bits.find({i, k});
          s.clean.push_back(it == bits.end() ? 0u : it->second);
        }
    s.labels = s.clean;
    return s;
  }

  // 128 points drawn from the instance's vertices and the axis-aligned box of all of them.
  static void add_object(Scene& s, const MeshInstance& m, nexp::Random& rng) {
    Box box;
    for (int a = 0; a < 3; ++a) {
      float lo = m.points[0][a], hi = lo;
      for (const auto& p : m.points) lo = std::min(lo, p[a]), hi = std::max(hi, p[a]);
      box.center[a] = (static_cast<double>(lo) + hi) / 2, box.size[a] = static_cast<double>(hi) - lo;
    }
    s.boxes.push_back(box);
    for (const std::size_t k : sample_indices(m.points.size(), kPoints, rng))
      for (int a = 0; a < 3; ++a) s.points.push_back(m.points[k][a]);
  }
};

json read_json(const fs::path& file) {
  std::ifstream in(file);
  if (!in) bad(file, "", "3DSSG's relationships.json", "no such file");
  json j;
  try {
    j = json::parse(in);
  } catch (const std::exception& e) {
    bad(file, "", "JSON", std::string("a parse error: ") + e.what(), "download the file again");
  }
  if (!j.is_object() || !j.contains("scans") || !j["scans"].is_array())
    bad(file, "top level", "an object with a \"scans\" array", j.is_object() ? "no \"scans\" array" : j.type_name());
  return j;
}

// The sub-graphs of the train scans and of the held-out ones, in file order (at most max_scenes each).
std::vector<Entry> select_entries(const json& j, const ThreeDssgOptions& o, const fs::path& subset,
                                  const fs::path& file) {
  const auto train_list = read_lines(subset / "train_scans.txt"), held_list = read_lines(subset / (o.split + "_scans.txt"));
  const std::set<std::string> train(train_list.begin(), train_list.end()), held(held_list.begin(), held_list.end());
  std::vector<Entry> out;
  std::size_t n_train = 0, n_held = 0;
  const std::size_t cap = o.max_scenes > 0 ? static_cast<std::size_t>(o.max_scenes) : SIZE_MAX;
  for (std::size_t i = 0; i < j["scans"].size(); ++i) {
    const json& e = j["scans"][i];
    const std::string where = fmt::format("scans[{}]", i);
    if (!e.is_object() || !e.contains("scan") || !e["scan"].is_string() || !e.contains("objects") ||
        !e["objects"].is_object() || !e.contains("relationships") || !e["relationships"].is_array())
      bad(file, where, "{\"scan\": id, \"objects\": {id: label}, \"relationships\": [[s, o, id, name]]}",
          e.dump().substr(0, 120));
    const std::string scan = e["scan"].get<std::string>();
    const bool is_train = train.count(scan) > 0;
    if (!is_train && !held.count(scan)) continue;
    std::size_t& n = is_train ? n_train : n_held;
    if (n >= cap) continue;
    ++n;
    out.push_back({i, scan, &e, is_train});
  }
  return out;
}

}  // namespace

std::string ThreeDssgDataset::describe() const {
  std::size_t nodes = 0, edges = 0;
  for (const auto& s : train) nodes += s.nodes(), edges += s.num_edges();
  return fmt::format("{} (label set {}: {} classes, {} predicates): {} train / {} test sub-graphs, {} train objects, {} "
                     "train edges; dropped {} objects outside the label set or without vertices and {} sub-graphs "
                     "with fewer than two objects",
                     name, options.label_set, taxonomy.num_classes(), taxonomy.num_predicates(), train.size(),
                     test.size(), nodes, edges, dropped_objects, dropped_scenes);
}

ThreeDssgDataset read_3dssg(const ThreeDssgOptions& o, std::uint64_t seed) {
  if (o.label_set != 160 && o.label_set != 20)
    throw nexp::ConfigError(fmt::format("dataset.label_set = {}: expected 160 (the release's classes and predicates) "
                                        "or 20 (SGFN's 20 classes and 8 predicates)", o.label_set));
  const fs::path root = o.root.empty() ? nexp::data_dir() / "3dssg" : fs::path(o.root);
  if (!fs::is_directory(root))
    throw nexp::DataError(fmt::format(
        "hellinger_sg.3dssg: dataset.root = {} is not a folder: expected the 3DSSG release ({}/3DSSG_subset/ with "
        "relationships.json, classes.txt, relationships.txt, train_scans.txt, {}_scans.txt) and the 3RScan meshes "
        "({}/3RScan/<scan id>/{}). {}",
        root.string(), root.string(), o.split, root.string(), kMesh, kGetRelease));
  const fs::path subset = root / "3DSSG_subset", file = subset / "relationships.json";
  ThreeDssgDataset d;
  d.name = "hellinger_sg.3dssg";
  d.options = o;
  d.taxonomy = o.label_set == 160 ? release_taxonomy(subset) : sgfn_taxonomy();
  const json j = read_json(file);
  const std::vector<Entry> entries = select_entries(j, o, subset, file);
  // One mesh read per scan, for all its sub-graphs.
  std::map<std::string, std::vector<std::size_t>> by_scan;
  for (std::size_t k = 0; k < entries.size(); ++k) by_scan[entries[k].scan].push_back(k);
  Reader reader{o, d.taxonomy, file};
  std::vector<std::optional<Scene>> scenes(entries.size());
  for (const auto& [scan, ks] : by_scan) {
    const auto mesh = read_instance_ply(root / "3RScan" / scan / kMesh);
    for (const std::size_t k : ks) {
      nexp::Random rng = nexp::Random::stream(seed, "3dssg_points", entries[k].index);
      scenes[k] = reader.scene(entries[k], mesh, rng);
    }
  }
  for (std::size_t k = 0; k < entries.size(); ++k) {
    if (!scenes[k]) {
      ++d.dropped_scenes;
      continue;
    }
    (entries[k].train ? d.train : d.test).push_back(std::move(*scenes[k]));
  }
  d.dropped_objects = reader.dropped_objects;
  auto require = [&](const std::vector<Scene>& scenes, const std::string& list) {
    if (scenes.empty())
      bad(file, "", fmt::format("sub-graphs of the scans in {} with two or more objects of label set {}", list,
                                o.label_set),
          "none");
  };
  require(d.train, "train_scans.txt");
  require(d.test, o.split + "_scans.txt");
  return d;
}

std::shared_ptr<nexp::Dataset> make_3dssg(const ThreeDssgOptions& o, nexp::RunContext& ctx) {
  return std::make_shared<ThreeDssgDataset>(read_3dssg(o, ctx.seed()));
}

}  // namespace hellinger_sg
