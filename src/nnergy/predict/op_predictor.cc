#include "nnergy/predict/op_predictor.h"

namespace nnergy::predict {

analytical::OpEstimate OpPredictor::predict_one(const OpQuery& query) const {
  return predict(std::span<const OpQuery>(&query, 1)).front();
}

}  // namespace nnergy::predict
