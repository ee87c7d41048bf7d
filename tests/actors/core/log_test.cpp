#include "actors/core/log.hpp"

#include <gtest/gtest.h>

namespace {

int evaluations = 0;

int counted() { return ++evaluations; }

class LogLevels : public ::testing::Test {
 protected:
  void TearDown() override { parley::log::set_level("info"); }
};

TEST_F(LogLevels, DisabledLevelsDoNotEvaluateTheirArguments) {
  parley::log::set_level("info");
  evaluations = 0;
  PARLEY_TRACE("trace {}", counted());
  PARLEY_DEBUG("debug {}", counted());
  EXPECT_EQ(evaluations, 0);
  PARLEY_INFO("info {}", counted());
  EXPECT_EQ(evaluations, 1);
}

TEST_F(LogLevels, TraceEvaluatesOnceEnabled) {
  parley::log::set_level("trace");
  evaluations = 0;
  PARLEY_TRACE("trace {}", counted());
  EXPECT_EQ(evaluations, 1);
  parley::log::set_level("off");
  PARLEY_ERROR("error {}", counted());
  EXPECT_EQ(evaluations, 1);
}

TEST_F(LogLevels, MacrosAreSingleStatements) {
  parley::log::set_level("off");
  bool branch = false;
  if (evaluations >= 0)
    PARLEY_WARN("in an if without braces {}", 1);
  else
    branch = true;
  EXPECT_FALSE(branch);
}

}  // namespace
