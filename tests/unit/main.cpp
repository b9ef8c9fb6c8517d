// One doctest binary for the unit tests: each area is a TEST_SUITE, run as a
// meson test of its own with --test-suite=<area>.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string_view>

namespace {

// How many test cases the filters selected: a run that selects none (a
// misspelt suite, a file left out of the build) must fail, not pass empty.
unsigned selected_cases = 0;

struct SelectionCounter : doctest::IReporter {
    explicit SelectionCounter(const doctest::ContextOptions&) {}
    void report_query(const doctest::QueryData&) override {}
    void test_run_start() override {}
    void test_run_end(const doctest::TestRunStats& stats) override
    {
        selected_cases = stats.numTestCasesPassingFilters;
    }
    void test_case_start(const doctest::TestCaseData&) override {}
    void test_case_reenter(const doctest::TestCaseData&) override {}
    void test_case_end(const doctest::CurrentTestCaseStats&) override {}
    void test_case_exception(const doctest::TestCaseException&) override {}
    void subcase_start(const doctest::SubcaseSignature&) override {}
    void subcase_end() override {}
    void log_assert(const doctest::AssertData&) override {}
    void log_message(const doctest::MessageData&) override {}
    void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace

REGISTER_LISTENER("selection-counter", 1, SelectionCounter);

// A binary run one suite at a time (unit_tests: one meson test per suite)
// would run a case outside every TEST_SUITE (one below a file's
// TEST_SUITE_END, say) in none of them, silently.
bool runs_by_suite(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i];
        if (arg.starts_with("--test-suite=") || arg.starts_with("-ts=")) return true;
    }
    return false;
}

bool every_case_in_a_suite()
{
    bool all = true;
    for (const auto& test : doctest::detail::getRegisteredTests())
        if (!test.m_test_suite || !*test.m_test_suite) {
            std::fprintf(stderr, "%s:%d: test case '%s' is in no TEST_SUITE, so no meson test runs it\n",
                         test.m_file.c_str(), test.m_line, test.m_name);
            all = false;
        }
    return all;
}

int main(int argc, char** argv)
{
    if (runs_by_suite(argc, argv) && !every_case_in_a_suite()) return 1;
    doctest::Context context(argc, argv);
    int status = context.run();
    if (context.shouldExit()) return status;
    if (status == 0 && selected_cases == 0) {
        std::fprintf(stderr, "no test case matched the filters: check the --test-suite name\n");
        return 1;
    }
    return status;
}
