// Bytes that are not UTF-8: which bytes are (util/byte_text), how messages
// show them (\xNN) and how JSON carries them (Python's surrogateescape,
// util/json_text), read back to the same bytes.
#include "util/byte_text.hpp"
#include "util/json_text.hpp"

#include "cunumpy_kernels/error.hpp"

#include <doctest/doctest.h>

TEST_SUITE_BEGIN("byte_text");

using namespace ck;
using nlohmann::json;

TEST_CASE("a sequence is UTF-8 only as Unicode's table 3-7 allows")
{
    CHECK(util::utf8_sequence_length("a") == 1);
    CHECK(util::utf8_sequence_length("\xc3\xa9") == 2);          // é
    CHECK(util::utf8_sequence_length("\xe2\x82\xac") == 3);      // €
    CHECK(util::utf8_sequence_length("\xf0\x9f\x98\x80") == 4);  // 😀
    CHECK(util::utf8_sequence_length("\xe9t\xc3\xa9") == 0);     // Latin-1 é, then ASCII
    CHECK(util::utf8_sequence_length("\x80") == 0);              // a stray continuation byte
    CHECK(util::utf8_sequence_length("\xc0\xaf") == 0);          // overlong '/'
    CHECK(util::utf8_sequence_length("\xe0\x80\xaf") == 0);      // overlong '/', three bytes
    CHECK(util::utf8_sequence_length("\xed\xa0\x80") == 0);      // an encoded surrogate
    CHECK(util::utf8_sequence_length("\xf4\x90\x80\x80") == 0);  // past U+10FFFF
    CHECK(util::utf8_sequence_length("\xe2\x82") == 0);          // cut short
    CHECK(util::utf8_sequence_length("") == 0);
    CHECK(util::is_utf8("caf\xc3\xa9/\xf0\x9f\x98\x80"));
    CHECK_FALSE(util::is_utf8("caf\xe9"));
}

TEST_CASE("messages show each byte outside UTF-8 as \\xNN and leave UTF-8 alone")
{
    CHECK(util::printable("/data/caf\xe9/push_cuda.cu") == "/data/caf\\xe9/push_cuda.cu");
    CHECK(util::printable("\xc0\xaf\xed\xa0\x80") == "\\xc0\\xaf\\xed\\xa0\\x80");
    CHECK(util::printable("caf\xc3\xa9 \xe2\x82\xac") == "caf\xc3\xa9 \xe2\x82\xac");
    CHECK(std::string(CacheError("cannot write /c/caf\xe9/x").what()) == "cannot write /c/caf\\xe9/x");
    CHECK(std::string(UsageError("caf\xc3\xa9").what()) == "caf\xc3\xa9");
}

TEST_CASE("JSON carries a byte outside UTF-8 as Python's surrogateescape writes it")
{
    json value = {{"path", "/src/caf\xe9/k.cu"}, {"include", "\xe9t\xe9.cuh"}, {"ok", "caf\xc3\xa9"}};
    CHECK(util::json_text(value) == R"({"include":"\udce9t\udce9.cuh","ok":"café","path":"/src/caf\udce9/k.cu"})");
    CHECK(util::json_text(json::array({"a\xff", 1})) == R"(["a\udcff",1])");
    // Python: json.dumps({"path": os.fsdecode(b"/src/caf\xe9")}), and its pair escapes of UTF-8.
    json read = util::parse_json(R"({"path": "/src/caf\udce9", "smile": "\ud83d\ude00", "e": "\u00e9"})");
    CHECK(read["path"] == "/src/caf\xe9");
    CHECK(read["smile"] == "\xf0\x9f\x98\x80");
    CHECK(read["e"] == "\xc3\xa9");
}

TEST_CASE("every string, key and NUL of a value reads back as the bytes it was")
{
    json value = {{"caf\xe9", {"\xc0\xaf", std::string("nul\0byte\xe9", 9), "\\udce9 as text", ""}},
                  {"nested", {{"k\x80", {{"deep", "\xff\xfe"}}}}},
                  {"plain", 1.5}};
    for (int indent : {-1, 2}) {
        std::string text = util::json_text(value, indent);
        CHECK(util::is_utf8(text));
        CHECK(util::parse_json(text) == value);
    }
}

TEST_CASE("UTF-8 values are written exactly as nlohmann writes them, so cache keys do not change")
{
    json value = {{"b", {1, "x\ty\"z\\", json::object(), json::array()}},
                  {"a", {{"c", nullptr}, {"d", true}}},
                  {"e", "caf\xc3\xa9 \x7f \x01"}};
    CHECK(util::json_text(value) == value.dump());
    CHECK(util::json_text(value, 2) == value.dump(2));
    value["f"] = "caf\xe9";  // the slow path lays out the rest as nlohmann does too
    std::string text = util::json_text(value, 2);
    value["f"] = "caf\\udce9";
    std::string escaped_backslash = value.dump(2);
    CHECK(text.replace(text.find("caf\\udce9"), 9, "caf\\\\udce9") == escaped_backslash);
}

TEST_CASE("malformed JSON is refused as nlohmann refuses it")
{
    CHECK_THROWS_AS(util::parse_json(R"({"a": "\u00zz"})"), json::parse_error);
    CHECK_THROWS_AS(util::parse_json(R"({"a": "\udce9)"), json::parse_error);
    CHECK(util::parse_json(R"({"a": )", nullptr, false).is_discarded());
}
