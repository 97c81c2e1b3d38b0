#pragma once
// The benchmark's metrics, each written once and tested against a hand computation or a published value.
//
//   iou, hungarian, matched_iou ...... boxes; Kuhn-Munkres assignment (O(n^3), potentials)
//   coco_map ......................... COCO mean average precision, 101-point interpolation, per class
//   alignment_score, overlap_score ... LayoutGAN++'s generation metrics (Kikuchi et al. 2021)
//   max_iou .......................... type-constrained Hungarian mean IoU against a target layout
//   adjusted_rand_index, nmi, ami .... clustering agreement (Hubert & Arabie 1985; Vinh et al. 2010)
//   reciprocal_rank, ndcg_at ......... retrieval with one relevant candidate
//   average_linkage .................. agglomerative clustering (UPGMA) on a distance matrix
//   ciede2000, wcag_contrast ......... colour difference (Sharma et al. 2005) and WCAG 2.x contrast ratio
// Kendall's tau and ROC-AUC come from nexp/stats.hpp.
#include <array>
#include <string>
#include <vector>

#include "layout.hpp"

namespace design_bench {

double iou(const Box& a, const Box& b);
double intersection(const Box& a, const Box& b);

// Minimum-cost assignment of the rows of an n x m cost matrix (n <= m or n > m): result[i] is the
// column of row i, -1 when the row is left over (n > m).
std::vector<int> hungarian(const std::vector<std::vector<double>>& cost);

// The one-to-one matching of `pred` to `truth` that maximises total IoU (Hungarian); ious[i] is the
// IoU of truth i with its match (0 when unmatched). `same_kind` forbids matches across kinds.
struct Matching {
  std::vector<int> truth_to_pred;
  std::vector<double> ious;
};
Matching matched_iou(const std::vector<Box>& pred, const std::vector<Box>& truth,
                     const std::vector<Kind>* pred_kind = nullptr, const std::vector<Kind>* truth_kind = nullptr);

// ---- detection: COCO mAP. One image's ground truth and detections.
struct Detection {
  Box box;
  Kind kind = Kind::Image;
  double score = 1;
};
struct DetectionImage {
  std::vector<Detection> truth, pred;
};
// AP at one IoU threshold for one class: greedy matching in score order (COCO), precision made monotone,
// sampled at recall 0, 0.01, ..., 1. Classes without ground truth are left out of the mean.
double average_precision(const std::vector<DetectionImage>& images, Kind kind, double threshold);
// The mean over classes of AP at `thresholds` (mAP@0.5: {0.5}; COCO's mAP: 0.5, 0.55, ..., 0.95).
double coco_map(const std::vector<DetectionImage>& images, const std::vector<double>& thresholds);
std::vector<double> coco_thresholds();  // 0.5:0.05:0.95

// ---- generation (boxes in canvas pixels, normalised by the canvas inside)
// LayoutGAN++'s alignment: mean over elements of -log(1 - d_i), d_i the smallest difference (canvas-
// normalised) between one of its left/centre/right or top/middle/bottom coordinates and the same
// coordinate of another element. 0 when every element aligns with another; lower is better.
double alignment_score(const std::vector<Box>& boxes, double width, double height);
// Mean over elements of the sum over other elements of |i n j| / |i|; 0 without overlaps.
double overlap_score(const std::vector<Box>& boxes);
// Mean IoU of the best type-respecting one-to-one matching of pred to truth, over the truth elements.
double max_iou(const std::vector<Box>& pred, const std::vector<Kind>& pred_kind, const std::vector<Box>& truth,
               const std::vector<Kind>& truth_kind);

// ---- clustering agreement between two labelings of the same items
double adjusted_rand_index(const std::vector<int>& a, const std::vector<int>& b);
double mutual_information(const std::vector<int>& a, const std::vector<int>& b);  // nats
double entropy(const std::vector<int>& a);
double normalized_mutual_information(const std::vector<int>& a, const std::vector<int>& b);  // arithmetic mean; = V-measure
double adjusted_mutual_information(const std::vector<int>& a, const std::vector<int>& b);    // arithmetic mean

// Average linkage (UPGMA) on a symmetric distance matrix, merged down to k clusters; labels 0..k-1.
std::vector<int> average_linkage(const std::vector<std::vector<double>>& distance, int k);

// ---- retrieval with one relevant candidate at 1-based rank r
inline double reciprocal_rank(int r) { return 1.0 / r; }
double ndcg_at(int rank, int k);  // 1 / log2(rank + 1) when rank <= k, else 0

// ---- colour
struct Lab {
  double l = 0, a = 0, b = 0;
};
std::array<double, 3> hex_to_rgb(const std::string& hex);  // "#rrggbb" -> [0, 1]^3
Lab srgb_to_lab(const std::array<double, 3>& rgb);         // D65 white
double ciede2000(const Lab& x, const Lab& y);               // kL = kC = kH = 1
double relative_luminance(const std::array<double, 3>& rgb);  // WCAG 2.x
double wcag_contrast(const std::string& hex_a, const std::string& hex_b);  // (L1 + 0.05) / (L2 + 0.05), 1..21

}  // namespace design_bench
