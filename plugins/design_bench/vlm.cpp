// The VLM model (vlm.hpp).
#include "vlm.hpp"

#include <fmt/format.h>

#include <map>

#include <nexp/llm.hpp>

#include "render.hpp"

namespace design_bench {

using nlohmann::json;

std::string task_prompt(const std::string& task) {
  static const std::map<std::string, std::string> p = {
      {"aspect_ratio", "Which aspect-ratio class (width:height) is this design's canvas: 1:1, 4:5, 9:16, 16:9, 1:1.41 or 3:1?"},
      {"count", "How many visible components (text blocks, images, shapes) does this design have? Groups do not count."},
      {"type", "What is the component inside the given box (canvas pixels): TEXT, IMAGE or GROUP?"},
      {"detection", "List every component of this design with its box [left, top, width, height] in canvas pixels, "
                    "its type (TEXT or IMAGE) and your confidence in [0, 1]."},
      {"layer_order", "Order the listed components from back (painted first) to front (painted last)."},
      {"alignment", "How are components a and b aligned: left, center, right (edges or centre in x), top, middle, "
                    "bottom (in y), or none?"},
      {"overlap", "Relation of component a to component b: disjoint, overlap, contains (a holds b) or inside (a in b)?"},
      {"grouping", "Which of the listed components belong together as one group (a button, a caption)? Give the groups "
                   "as lists of ids; a component on its own is a group of one."},
      {"intent_to_layout", "Design a layout for the canvas: give each listed element a box [left, top, width, height] "
                           "in canvas pixels."},
      {"partial_completion", "Some components were removed from this design; their types are listed. Give a box "
                             "[left, top, width, height] in canvas pixels for each removed component."},
      {"aspect_adapt", "Adapt this design to a new canvas of the given width and height (px), as a designer re-lays a "
                       "template for another format: give each listed component (its box in the shown design is "
                       "given) a box [left, top, width, height] in the new canvas's pixels."},
      {"insertion", "Where should the described element go in this design? Give its box [left, top, width, height] "
                    "in canvas pixels, keeping its width and height."},
      {"sibling_matching", "Are these two designs variants of the same template (same structure and style, other "
                           "content)? Answer same (true or false) and a score in [0, 1]."},
      {"retrieval", "The first image is the query. Rank the candidate designs (by id) from most to least likely to "
                    "be a variant of the query's template."},
      {"style_completion", "One text element's font, size and colour were hidden. Give its font family "
                           "(e.g. \"Montserrat--700\"), font size in canvas px and colour as #rrggbb."},
      {"colour_transfer", "Recolour this design with the given palette: give a #rrggbb colour for the background "
                          "and for each listed component id, keeping the text legible."},
      {"clustering", "Group these designs into the given number of templates: give one integer label per design, in "
                     "the order shown."}};
  return p.at(task);
}

json answer_schema(const std::string& task) {
  const json box = {{"type", "array"}, {"items", {{"type", "number"}}}, {"minItems", 4}, {"maxItems", 4}};
  const json str = {{"type", "string"}}, ids = {{"type", "array"}, {"items", str}};
  json a;
  if (task == "count") a = {{"type", "integer"}};
  else if (task == "detection")
    a = {{"type", "array"},
         {"items", {{"type", "object"}, {"properties", {{"box", box}, {"type", str}, {"score", {{"type", "number"}}}}}, {"required", {"box", "type"}}}}};
  else if (task == "layer_order" || task == "retrieval") a = ids;
  else if (task == "grouping") a = {{"type", "array"}, {"items", ids}};
  else if (task == "intent_to_layout" || task == "aspect_adapt")
    a = {{"type", "array"}, {"items", {{"type", "object"}, {"properties", {{"id", str}, {"box", box}}}, {"required", {"id", "box"}}}}};
  else if (task == "partial_completion")
    a = {{"type", "array"}, {"items", {{"type", "object"}, {"properties", {{"type", str}, {"box", box}}}, {"required", {"type", "box"}}}}};
  else if (task == "insertion") a = {{"type", "object"}, {"properties", {{"box", box}}}, {"required", {"box"}}};
  else if (task == "sibling_matching")
    a = {{"type", "object"}, {"properties", {{"same", {{"type", "boolean"}}}, {"score", {{"type", "number"}}}}}, {"required", {"same"}}};
  else if (task == "clustering") a = {{"type", "array"}, {"items", {{"type", "integer"}}}};
  else if (task == "style_completion")
    a = {{"type", "object"}, {"properties", {{"font", str}, {"size", {{"type", "number"}}}, {"color", str}}},
         {"required", {"font", "size", "color"}}};
  else if (task == "colour_transfer")
    a = {{"type", "object"}, {"properties", {{"colors", {{"type", "object"}, {"additionalProperties", str}}}}}, {"required", {"colors"}}};
  else a = str;
  return {{"type", "object"}, {"properties", {{"answer", a}}}, {"required", {"answer"}}};
}

json parse_reply(const std::string& text) {
  std::string t = text;
  for (auto open = t.find("<think>"); open != std::string::npos; open = t.find("<think>")) {
    const auto close = t.find("</think>", open);
    t.erase(open, close == std::string::npos ? std::string::npos : close + 8 - open);
  }
  if (auto fence = t.find("```"); fence != std::string::npos) {
    const auto body = t.find('\n', fence);
    const auto end = t.find("```", fence + 3);
    if (body != std::string::npos && end != std::string::npos && end > body) t = t.substr(body + 1, end - body - 1);
  }
  const json j = json::parse(t, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("answer")) return json();
  return j["answer"];
}

json VlmModel::answer(const std::string& task, const Item& item, const Corpus& c) {
  nexp::llm::Message user = nexp::llm::Message::user("");
  json about = item.input.is_null() ? json::object() : item.input;
  const Layout& first = c.layouts[item.layouts[0]];
  about["canvas"] = {{"width", first.width}, {"height", first.height}};
  if (task == "type") about["box"] = item.input["box"];
  if (task == "colour_transfer") {
    json slots = json::array({"background"});
    for (const auto& comp : first.components)
      if (!comp.color.empty()) slots.push_back(comp.id);
    about["components"] = slots;
  }
  if (task == "layer_order" || task == "grouping") {
    json listed = json::array();
    for (int k : leaves(first)) listed.push_back(first.components[k].id);
    about["components"] = listed;
  }
  if (task == "retrieval" || task == "clustering") {
    json shown = json::array();
    for (std::size_t k = 0; k < item.layouts.size(); ++k) shown.push_back(c.layouts[item.layouts[k]].id);
    about["images"] = shown;
  }
  // intent_to_layout shows no design; aspect_adapt only its source (the second layout is the answer).
  const std::size_t shown = task == "intent_to_layout" ? 0 : task == "aspect_adapt" ? 1 : item.layouts.size();
  for (std::size_t k = 0; k < shown; ++k)
    user.image(nexp::llm::image_data_url(layout_png(c.layouts[item.layouts[k]], image_dir_), "image/png"));
  user.text = fmt::format("{}\n{}\nAnswer with JSON: {{\"answer\": ...}}.", task_prompt(task), about.dump());
  nexp::llm::Request r;
  r.messages = {nexp::llm::Message::system("You analyse graphic designs. Reply with JSON only."), user};
  r.json_schema = answer_schema(task).dump();
  r.temperature = 0;
  r.seed = static_cast<std::int64_t>(seed_ % 1000000007);
  r.max_tokens = 1024;
  return parse_reply(client_.chat(r).text());  // an LlmError (no answer at all) ends the run
}

}  // namespace design_bench
