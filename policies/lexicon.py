"""Every Chinese and English word list and table the policies read, in one place.

A word that changes a decision lives here, so that adding a spelling ("sept", "港元") or a word
that only asks ("哪儿") is one edit that every reader of it sees. Patterns that are syntax rather
than vocabulary (a list marker, "第…条") stay with the rule that reads them. Stop words are the
tokenizer's (``tools.tokenize``): recall and coverage must drop the same ones.

Groups: numerals and months; units of duration, measure and money; clause words; words that only
ask; the vocabulary of compared values (negations, opposites, unit atoms, particles); the words of
boundaries (connectives, dangling openings); the words of cross-references (rule nouns and what a
referenced name is not).
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    """A set of words written as one line of text: a list reads better as the words themselves."""
    return frozenset(text.split())


CN_DIGITS: dict[str, int] = {
    "零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3,
    "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9,
}  # fmt: skip
CN_UNITS: dict[str, int] = {"十": 10, "百": 100, "千": 1000, "万": 10000}
CN_NUMERAL_CHARS = "".join(CN_DIGITS) + "".join(CN_UNITS)
CN_DIGIT_BY_VALUE = "零一二三四五六七八九"
EN_NUMBER_WORDS: dict[str, int] = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
EN_ORDINAL_QUARTERS = ("first", "second", "third", "fourth")
MONTH_NAMES = "january february march april may june july august september october november december".split()
# Every English spelling of a month: the name, its first three letters, and "sept".
MONTHS: dict[str, int] = {
    **{name: i for i, name in enumerate(MONTH_NAMES, 1)},
    **{name[:3]: i for i, name in enumerate(MONTH_NAMES, 1)},
    "sept": 9,
}
# Characters a Chinese amount of time or a count is not preceded by: "哪一年" asks, "每一天" and
# "第一年" are no amounts of time.
NOT_BEFORE_CN_NUMBER = "哪几每这那同某第"

# canonical unit -> (Chinese spellings, English (singular, plural) pairs)
DURATIONS: dict[str, tuple[tuple[str, ...], tuple[tuple[str, str], ...]]] = {
    "year": (("年",), (("year", "years"),)),
    "month": (("个月",), (("month", "months"),)),
    "week": (("周", "个星期"), (("week", "weeks"),)),
    "day": (("天",), (("day", "days"),)),
    "hour": (("小时", "个小时"), (("hour", "hours"),)),
    "minute": (("分钟",), (("minute", "minutes"),)),
    "second": (("秒", "秒钟"), (("second", "seconds"),)),
    "workday": (("个工作日", "工作日"), (("business day", "business days"), ("working day", "working days"))),
}
DURATION_ZH: dict[str, str] = {
    "年": "year", "月": "month", "周": "week", "星期": "week", "天": "day", "小时": "hour",
    "分钟": "minute", "秒": "second", "秒钟": "second", "工作日": "workday",
}  # fmt: skip
MEASURE_ZH_TO_EN: dict[str, str] = {
    "米": "m", "公里": "km", "千米": "km", "厘米": "cm", "毫米": "mm", "公斤": "kg", "千克": "kg",
    "英寸": "inch", "寸": "inch",
}  # fmt: skip
MEASURE_EN_TO_ZH: dict[str, tuple[str, ...]] = {
    "cm": ("厘米",), "mm": ("毫米",), "km": ("公里", "千米"), "kg": ("公斤", "千克"),
    "inch": ("英寸", "寸"), "inches": ("英寸", "寸"),
}  # fmt: skip
CURRENCY_OF: dict[str, str] = {
    "¥": "CNY", "元": "CNY", "块钱": "CNY", "rmb": "CNY", "cny": "CNY", "yuan": "CNY",
    "$": "USD", "us$": "USD", "usd": "USD", "美元": "USD", "美金": "USD", "dollar": "USD", "dollars": "USD",
    "€": "EUR", "eur": "EUR", "欧元": "EUR", "euro": "EUR", "euros": "EUR",
    "£": "GBP", "gbp": "GBP", "英镑": "GBP",
    "hk$": "HKD", "hkd": "HKD", "港币": "HKD", "港元": "HKD",
    "jpy": "JPY", "日元": "JPY", "yen": "JPY",
}  # fmt: skip
CURRENCY_FORMS: dict[str, tuple[str, ...]] = {
    "CNY": ("{n}元", "¥{n}", "{n}rmb", "rmb{n}", "{n}cny", "cny{n}", "{n}块", "{n}块钱", "{n}yuan"),
    "USD": ("${n}", "{n}usd", "usd{n}", "{n}美元", "{n}美金", "{n} dollars"),
    "EUR": ("€{n}", "{n}eur", "eur{n}", "{n}欧元", "{n} euros"),
    "GBP": ("£{n}", "{n}gbp", "gbp{n}", "{n}英镑"),
    "HKD": ("hk${n}", "{n}hkd", "hkd{n}", "{n}港币", "{n}港元"),
    "JPY": ("{n}jpy", "jpy{n}", "{n}日元", "{n} yen"),
}
# The signs money is written with (the full-width yen is "¥" once NFKC-normalised).
CURRENCY_SIGNS: frozenset[str] = frozenset(k for k in CURRENCY_OF if len(k) == 1 and not k.isalpha())

CLAUSE_WORDS: dict[str, str] = {
    "section": "section", "sec.": "section", "§": "section", "clause": "clause", "article": "article",
    "art.": "article", "chapter": "chapter", "ch.": "chapter", "part": "part",
}  # fmt: skip
CLAUSE_EN_TO_ZH: dict[str, str] = {
    "section": "节",
    "article": "条",
    "clause": "条",
    "chapter": "章",
    "part": "部分",
}
CLAUSE_ZH_TO_EN: dict[str, str] = {"条": "article", "章": "chapter", "节": "section", "部分": "part"}
# Capitalised words that precede a number without naming a product ("Within 30", "Top 5").
NOT_MODEL_NAMES: frozenset[str] = _words(
    "within after before about over under up top step steps page pages only every last next first since "
    "until around nearly almost least more less than per section sec chapter article clause part "
    "version level grade number no room"
)

# Whole Chinese words that only ask (the tokenizer's STOPWORDS_ZH already drops 怎么/如何/什么/吗/...).
QUESTION_WORDS_ZH: frozenset[str] = _words(
    "多久 多长 多长时间 哪里 哪儿 哪些 哪个 哪种 哪家 哪位 哪几种 几 几个 几种 几次 几年 几天 多少 多少钱 "
    "为何 为啥 咋 咋办 啥 谁 何时 何地 什么时候 怎么办 怎么样 怎样 能不能 可不可以 是不是 有没有 请问 "
    "到底 呢 么 可 可否 如何 是否 能否 介绍 一下"
)
# Chinese words opening with these ask rather than name ("几年", "哪几种", "多少人", "怎么回事").
QUESTION_PREFIXES_ZH: tuple[str, ...] = ("几", "哪", "多少", "多久", "多长", "怎", "什么", "为什么")
QUESTION_WORDS_EN: frozenset[str] = _words(
    "how what which who whom whose when where why can could would should may might must shall "
    "please explain tell know want need able possible s t am any some not no also just through via "
    # help-desk framing: "how do I fix the X issue" asks about X
    "fix fixing solve resolve issue issues problem problems trouble help "
    # "what does X mean", "explain briefly", "what types of things can X do": the framing, not X
    "mean means meaning brief briefly particular specific thing things type types kind kinds sort "
    "different exactly actually basically about "
    # what is left of a contraction once its "'t" is split off ("don't" -> "don")
    "don doesn didn isn aren wasn weren won wouldn couldn shouldn"
)
# Greetings and thanks: a question of only these, question words and stop words names nothing to look
# for (``policies.question.analysis.contentless``); in any other question they are ordinary words.
SMALL_TALK: frozenset[str] = _words(
    "hi hello hey thanks thank ok okay 你好 您好 谢谢 多谢 好的 嗯 嗯嗯 在吗 在不在 哈喽 嗨 喂"
)
# The asking words left out of a question's subject terms (``policies.question.analysis.subject_terms``),
# which the conflict check compares texts by. The conflict rules were tuned with this shorter list; it also
# drops "多大" and "时候", which the coverage terms keep.
ASKING_WORDS_ZH: frozenset[str] = _words(
    "多少 多久 多长 多大 几 几个 几次 什么 哪 哪里 哪个 哪些 哪年 谁 是否 时候 何时 为什么"
)

NEGATIONS: frozenset[str] = _words(
    "不 没 没有 无 未 非 禁止 勿 not no never cannot can't isn't aren't doesn't don't won't"
)
# Opposite words (normalised); either order counts.
OPPOSITES: frozenset[frozenset[str]] = frozenset(
    frozenset(pair.split("/"))
    for pair in (
        "free/charged free/paid free/fee allowed/prohibited allowed/forbidden permitted/prohibited yes/no "
        "enabled/disabled 免费/收费 可以/不能 可以/禁止 允许/禁止 支持/不支持 能/不能 开启/关闭"
    ).split()
)
# Atoms that follow a number as its unit; a shared one is taken into the value ("1361" + "万").
UNIT_ATOMS: frozenset[str] = _words(
    "万 亿 千 百 个 人 次 位 名 席 届 级 % ‰ 元 年 月 日 号 天 时 分 秒 周 "
    "km kg million billion thousand percent"
)
# Unit words that tell what kind a compared number is: (English words, Chinese spellings) a kind.
# Narrower than the unit tables above, on purpose: a year is a date ("2021年"), and the singular
# "week", "month", "second" are left out ("a week before", "for the second straight year").
PERCENT_CUES = (_words("% ‰ percent"), ("百分点",))
AMOUNT_CUES = (CURRENCY_SIGNS | _words("usd rmb dollars yuan"), ("元",))
DURATION_CUES = (
    _words("days day hours hour minutes weeks months seconds"),
    ("工作日", "天", "小时", "分钟", "秒", "个月", "周"),
)
DATE_CUES = (frozenset(MONTHS), ("年", "月", "日", "号"))
# Punctuation inside a written value ("1,000", "Oct 19, 2021", "1.5") and words inside a name.
CONNECTORS: frozenset[str] = _words("· • - ' ’ . , &")
NAME_LINKS: frozenset[str] = _words("of the de da van von der la le and & ii iii")
# Particles a name neither starts nor ends with: "报表的", "或应用网关" are phrases, not names.
CJK_EDGE_PARTICLES: frozenset[str] = frozenset("的了或与與及在把被将將")
# CJK grammar characters a value is compared without: "与" / "與" and "在男子3" / "男子三" are no new value.
CJK_FUNCTION_CHARS: frozenset[str] = frozenset("的了之与與和及或在于於是為为由被把将將也都又而其这這那此该該")

CONNECTIVES_ZH: frozenset[str] = _words(
    "以及 并且 而且 或者 但是 因为 由于 如果 包括 例如 比如 即 和 与 及 或 并 且 但 而 跟 还有"
)
CONNECTIVES_EN: frozenset[str] = _words(
    "and or but nor with of to the a an for from in on by that which including because if when while "
    "than as into via plus such e.g. i.e."
)
# Openings that need what came before, longest first so "此外" wins over "此".
DANGLING_ZH: tuple[str, ...] = tuple(
    sorted(
        "除此之外 与此同时 此外 此时 此处 此类 此 该 上述 以上 但是 但 不过 然而 其中 另外 "
        "同时 因此 所以 因而 否则 反之 对此 它们 它 这些 这个 这种 这样 这里 这 那么 而且 并且".split(),
        key=len,
        reverse=True,
    )
)
# Openings that start with a dangling word but are not: "这边建议您" (= "we suggest"), "该如何".
NOT_DANGLING_ZH: tuple[str, ...] = ("这边", "该如何", "该怎", "该不该", "但凡", "以上海")

# What a rule is called: a reference to one is something the answer may depend on.
RULE_NOUNS_ZH: tuple[str, ...] = tuple("规则 规定 办法 政策 制度 条款 协议 细则 章程 须知".split())
# A standard is referred to the way a rule is ("按照国家标准执行"), but the answer does not depend on
# it the way it depends on a rule ("请参考ES5标准" sends a developer to a specification).
STANDARD_NOUN_ZH = "标准"
# Pointers inside the same text ("请参考以下步骤", "可参考上方配置") and names that say nothing.
INTERNAL_REF_PREFIXES: tuple[str, ...] = tuple(
    "以下 如下 下列 下方 下面 下图 上图 下文 上文 上方 上面 上述 "
    "本 此 该 这 图 附图 前文 后文 示例 正文 第".split()
)
GENERIC_REF_NAMES: frozenset[str] = frozenset((*RULE_NOUNS_ZH, STANDARD_NOUN_ZH)) | _words(
    "文档 链接 说明 官网 页面 帮助文档 教程 视频 截图"
)
# A name holding these is a clause, not a title: the link text was stripped and the next words ran on.
NOT_IN_REF_NAME_ZH: frozenset[str] = _words(
    "是 可以 如果 您 你 我们 需要 的话 即可 就 都 会 要 能 请 点击 进行 不 也 还 已 后 时 建议"
)
NOT_REF_NAME_START_ZH: tuple[str, ...] = tuple(
    "由于 根据 其中 如果 若 因为 当 对于 通过 使用 自行 所有 为了 按照 一般 目前 先".split()
)
# A name after a weak marker ("according to …") counts only when it holds one of these.
REFERENCE_NOUNS_EN: frozenset[str] = _words(
    "policy policies rules rule terms agreement guide guidelines manual section chapter article clause "
    "conditions procedure faq appendix"
)

# The words of a comparison (``policies.evidence.comparison``): what joins the named sides, the nouns and
# verbs that make joined names a comparison, and the framing a side's name is read without.
COMPARE_LINKS_ZH: tuple[str, ...] = ("以及", "和", "与", "與", "跟", "及")
COMPARE_NOUNS_ZH: tuple[str, ...] = tuple(
    sorted("区别 區別 不同 不同之处 差别 差異 差异 异同 不一样 分别".split(), key=len, reverse=True)
)
COMPARE_VERBS_ZH: tuple[str, ...] = tuple(
    sorted("比较 比較 对比 對比 对照 相比 相较 比起来".split(), key=len, reverse=True)
)
COMPARE_WHICH_ZH: tuple[str, ...] = tuple(
    sorted("哪个 哪一个 哪种 哪款 哪一款 哪一种 谁".split(), key=len, reverse=True)
)
# Words a Chinese side opens with that only frame the question ("请问基础版和…", "你们的高级版…").
SIDE_PREFIXES_ZH: tuple[str, ...] = tuple(
    sorted(
        "请问 请 我想知道 想知道 我想问 想问 我想了解 想了解 一下 你们的 你们 您的 我的 贵司的 贵司".split(),
        key=len,
        reverse=True,
    )
)
# Verbs a Chinese side's name runs into before the comparison word: "Topic方式使用对比" compares the
# ways, "工号获取的区别" the numbers; the verb is no part of the name.
SIDE_SUFFIXES_ZH: tuple[str, ...] = tuple(
    sorted("使用 获取 设置 配置 操作 开通 开启 申请".split(), key=len, reverse=True)
)
# A side opening with these is the other side's complement ("专业版和非专业版", "认证跟不认证",
# "members and non-members"): what is said of the one says what the other lacks.
COMPLEMENT_PREFIXES: tuple[str, ...] = ("非", "不", "无", "未", "没有", "non-", "non ", "not ", "without ")
# Words an English side opens or ends with that are framing, not the name ("is the Premium plan").
SIDE_FILLERS_EN: frozenset[str] = _words(
    "the a an my your our their this that these those both between is are was were does do did "
    "what which how why should would could can will may i we you it its"
)

# Page furniture a help centre's export carries as text (``policies.decision.quotes.furniture``): a unit
# holding one of these phrases (lower case, as substrings) is never quoted as an answer.
PAGE_FURNITURE: tuple[str, ...] = (
    "all rights reserved", "was this article helpful", "was this helpful", "related articles",
    "min read", "版权所有", "对您有帮助吗", "相关文章", "浏览量",
)  # fmt: skip
# A dateline opens with one of these and holds a date ("Last updated: 10 January 2026", "更新于
# 2025-09-18"): when the page was written, never an answer (``policies.decision.passage``).
# words of a question asking when a page was written: only then is its dateline quoted
UPDATE_ASKS: tuple[str, ...] = (
    "updated", "last update", "modified", "published", "更新", "修改", "发布",
)  # fmt: skip
DATELINE_OPENINGS: tuple[str, ...] = (
    "last updated", "updated on", "updated:", "last modified", "published on", "published:", "posted on",
    "更新于", "更新时间", "最后更新", "发布于", "发布时间",
)  # fmt: skip

# The measure a question asks for (``policies.question.analysis.asked_measure``): the words that ask for one
# kind of value, tried in this order (a duration before a count: "how many days" asks how long). English
# entries are lower-case phrases matched on word boundaries, Chinese ones as substrings.
MEASURE_DURATION_EN: tuple[str, ...] = (
    "how long", "how soon", "how much time", "how many days", "how many hours", "how many minutes",
    "how many weeks", "how many months", "how many years", "how many business days",
    "how many working days", "valid for",
)  # fmt: skip
MEASURE_DURATION_ZH: tuple[str, ...] = tuple(
    "多久 多长时间 多长 几天 几个月 几年 几小时 几个小时 几分钟 几周 几个工作日 多少天 多少小时 多少分钟 "
    "多少年 多少个月 多少个工作日 期限 有效期 时长".split()
)
MEASURE_AMOUNT_EN: tuple[str, ...] = (
    "how much is", "how much are", "how much does", "how much do", "how much will", "how much would",
    "how much to", "how much for", "how much money", "price", "prices", "priced", "cost", "costs",
    "fee", "fees", "charge", "charges", "charged",
)  # fmt: skip
MEASURE_AMOUNT_ZH: tuple[str, ...] = tuple(
    "多少钱 几块钱 多少元 价格 价钱 售价 费用 收费 资费 多贵 花多少".split()
)
MEASURE_DATE_EN: tuple[str, ...] = (
    "when", "date", "what day", "what year", "which year", "which day", "what time",
)  # fmt: skip
MEASURE_DATE_ZH: tuple[str, ...] = tuple(
    "什么时候 何时 哪天 哪一天 哪年 哪一年 几号 几月 几点 日期 时间".split()
)
MEASURE_PERCENT_EN: tuple[str, ...] = ("what percentage", "what percent", "how many percent", "what share")
MEASURE_PERCENT_ZH: tuple[str, ...] = tuple("百分之几 百分比 比例 比率 占比".split())
MEASURE_COUNT_EN: tuple[str, ...] = ("how many", "number of", "how much storage", "how much space")
# a number of any kind ("增长了多少", "how much has it grown"), when no word above says which
MEASURE_NUMBER_EN: tuple[str, ...] = ("how much", "how many", "what number")
MEASURE_NUMBER_ZH: tuple[str, ...] = ("多少", "几")
MEASURE_COUNT_ZH: tuple[str, ...] = tuple(
    "几个 多少个 几次 多少次 几位 多少位 几名 多少名 几人 多少人 几家 多少家 几台 几张 几条 几项 "
    "数量 多大".split()
)

# The shape of a question (``policies.question.shape``): the words that say what kind of answer it wants.
# English entries are lower-case phrases matched on word boundaries, Chinese ones as substrings. A measure
# ("how many", "多少") asks for one value whatever else the question says, so those come first there.
SHAPE_COMPARISON_EN: tuple[str, ...] = (
    "difference", "differences", "differ", "differs", "different from", "compare", "compared",
    "comparing", "comparison", "vs", "versus",
)  # fmt: skip
SHAPE_COMPARISON_ZH: tuple[str, ...] = tuple(
    "区别 差别 差异 异同 对比 比较 相比 有什么不同 有何不同 有哪些不同 不一样 哪个好 哪个更".split()
)
SHAPE_PROCEDURE_EN: tuple[str, ...] = (
    "how do", "how does", "how can", "how could", "how should", "how would", "how to", "steps",
    "step by step", "procedure", "instructions", "way to", "ways to", "what should i do",
    "what do i do", "what can i do", "what to do",
)  # fmt: skip
SHAPE_PROCEDURE_ZH: tuple[str, ...] = tuple(
    "如何 怎么 怎样 怎麼 咋 步骤 流程 操作方法 方法 办法 教程".split()
)
# "怎么样" asks what something is like, "怎么回事"/"怎么会" why it happens: explanations, not steps.
SHAPE_NOT_PROCEDURE_ZH: tuple[str, ...] = ("怎么样", "怎样的", "怎么回事", "怎么会", "怎么了")
SHAPE_LIST_EN: tuple[str, ...] = (
    "what are the", "what kinds of", "what types of", "what sorts of", "which of the", "list of",
    "list the", "list all", "what options", "what features", "what settings", "which ones",
)  # fmt: skip
SHAPE_LIST_ZH: tuple[str, ...] = tuple("哪些 哪几 几种 几类 有什么 列举 清单".split())
SHAPE_EXPLANATION_EN: tuple[str, ...] = (
    "why", "explain", "describe", "tell me about", "know about", "overview", "summary", "summarize",
    "summarise", "what is the use of", "what is the purpose", "what does", "purpose of", "reason",
)  # fmt: skip
SHAPE_EXPLANATION_ZH: tuple[str, ...] = tuple(
    "为什么 为何 为啥 原因 介绍 总结 概括 概述 解释 含义 意思 作用 用途 了解 怎么样 怎么回事 怎么会".split()
)

# --- follow-ups (policies.question.followup): words that point back at an earlier turn of a conversation ---
# Chinese words that stand for what an earlier turn was about (longest first when matched).
REFER_ZH: tuple[str, ...] = tuple(
    "该产品 该服务 该部门 该型号 这款 那款 这一款 这个 那个 这项 那项 该项 它们 它俩 两者 二者 "
    "它 其 该 此 本品".split()
)
# Words that hold 其/该/此/这个/那个 without pointing back ("其他", "应该", "因此", "这个月").
NOT_REFER_ZH: tuple[str, ...] = tuple(
    "其他 其它 其中 其实 其余 其次 其间 尤其 极其 与其 及其 应该 活该 该不该 因此 此外 如此 从此 此时 "
    "彼此 由此 此前 此后 为此 就此 这个月 那个月 这个星期 这个周 该如何 该怎 该去 该找 该选 该在 该用 该做 "
    "该填 该交 该带 该向 该注意 我该 应当".split()
)
REFER_PLURAL_ZH: tuple[str, ...] = ("它们", "它俩", "两者", "二者")
# English: pronouns (a whole word), "this"/"that" unless a time word follows, "the same one".
REFER_EN: tuple[str, ...] = (
    "the same one", "this one", "that one", "it", "its", "they", "them", "their", "this", "that",
    "these", "those", "both",
)  # fmt: skip
REFER_PLURAL_EN: frozenset[str] = _words("they them their these those both")
# "this year", "that way": deixis of time and manner, not a subject
NOT_REFER_AFTER_EN: frozenset[str] = _words(
    "year month week time morning evening afternoon weekend way day night summer winter spring autumn fall"
)
# "that" is a conjunction unless one of these (or the end of the question) follows it
REFER_THAT_BEFORE_EN: frozenset[str] = _words(
    "is was does do did can will would cost costs work works include includes mean means apply applies "
    "cover covers take takes need needs come comes have has support supports require requires one plan "
    "device app product service model option offer"
)
# "is it possible to ...", "it takes two days to ...": an "it" that stands for nothing said before
DUMMY_IT_EN: tuple[str, ...] = (
    r"\bis it (?:possible|necessary|true|ok|okay|allowed|required|mandatory|worth)\b",
    r"\bit(?: is|'s| was)? (?:possible|necessary|true|ok|okay|allowed|required|mandatory)\b",
    r"\bit takes? (?:\w+ ){0,3}to\b",
    r"\bdoes it take (?:\w+ ){0,3}to\b",
)  # fmt: skip
# Nouns too generic to name a subject on their own ("部门的负责人是谁", "does the app sync?")
GENERIC_SUBJECTS_ZH: tuple[str, ...] = tuple(
    "部门 产品 设备 机器 应用 软件 服务 套餐 型号 系统 课程 项目 功能 单位 办公室 科室 学院 门店 "
    "会员卡".split()
)
GENERIC_SUBJECTS_EN: frozenset[str] = _words(
    "app application device product plan service department office model unit machine program "
    "course system phone card membership store"
)
# Words before a Chinese subject that frame the question ("请问", "那么"), and the words that end it
# (a predicate, a question word, a particle): the subject of "X200路由器支持哪些频段" is "X200路由器".
FRAMING_ZH: tuple[str, ...] = tuple(
    "请问 我想问 我想知道 想问一下 你好 您好 那么 那 还有 另外 我们 我们的 我的 你们的 贵公司的 那请问 "
    "谢谢 多谢 好的 好 嗯 明白了 知道了 收到".split()
)
PREDICATE_ZH: frozenset[str] = _words(
    "的 是 有 支持 能 可以 可 会 要 需要 在 怎么 如何 怎样 多少 多久 多长 几 哪 哪些 哪个 哪里 什么 为什么 "
    "每 每月 每年 每天 吗 呢 和 与 跟 比 对 用 适用 包括 包含 提供 收 需 还 也 都 一般 通常 最 从 到 给 被 "
    "把 将 能否 是否 能不能 可不可以 有没有 是不是 怎么办 该 几年 几天 多大 多重 多高 何时 什么时候 "
    "具体 主要 无法 不能 不 没 没有 已经 一直 为 由 向 找 去"
)
# English words that end a subject's noun phrase: verbs, auxiliaries, prepositions, question words
PHRASE_BREAKS_EN: frozenset[str] = _words(
    "is are was were be been being am do does did have has had can could will would should may might must "
    "shall cost costs work works support supports include includes take takes need needs get gets come "
    "comes mean means apply applies cover covers run runs last lasts charge charges require requires "
    "allow allows offer offers open opens close closes use used make makes let lets go goes keep keeps "
    "of in on at for to from with by per about into over under after before during between than and or "
    "how what when where who why which whom whose if i you we he she they it this that these those "
    "there here not no yes please also too still only just again"
)
DETERMINERS_EN: frozenset[str] = _words("the my your our a an their his her this that these those")
# English words of a question that ask about a subject already on the table, never name one
NOT_SUBJECT_EN: frozenset[str] = _words(
    "same one ones thing things way thanks thank hi hello ok okay great sure cool bye good nice much lot"
)
# The opening of a statement that carries the conversation on ("we are moving abroad next month")
STATEMENT_OPENINGS_EN: tuple[str, ...] = ("i ", "i'm ", "i am ", "we ", "we're ", "we are ", "my ", "our ")
STATEMENT_OPENINGS_ZH: tuple[str, ...] = ("我", "我们", "我家", "本人")
# A Chinese question opening with one of these has left its subject out ("可以顺延到明年吗")
ZERO_SUBJECT_ZH: tuple[str, ...] = tuple(
    "可以 可不可以 能不能 能否 能 需要 需不需要 要不要 是否 会不会 还能 还可以 也可以 也能 支持 适用".split()
)
# What "what about X" / "X 的呢" names, read (policies.question.followup_swap): the words that make X a
# thing of the earlier turn's kind ("the Starter one", "入门版的"), the prepositions that make it a
# place or a scope ("how about in Hong Kong?", "在香港呢"), and the places a question may be asked of.
ONE_WORDS_EN: frozenset[str] = _words("one ones version edition")
SCOPE_PREPOSITIONS_EN: frozenset[str] = _words("in for at on to from within inside")
SCOPE_PREPOSITIONS_ZH: tuple[str, ...] = ("在", "对于", "针对", "寄到", "发往", "到")
# Units only one attribute is measured in: a value in one names its attribute in either language
# ("5200mAh" is a battery's capacity; policies.conflicts.attributes compares it across languages)
UNIT_ATTRIBUTE_WORDS: dict[str, tuple[str, ...]] = {
    "mah": ("battery", "capacity", "电池", "容量", "电池容量")
}
# A question opening with these goes on from the earlier turn ("那充满能用多久呢": another attribute of it)
LINK_OPENINGS_ZH: tuple[str, ...] = ("那么", "那请问", "那")
PLACES_EN: frozenset[str] = frozenset(
    (
        "Africa", "America", "Asia", "Australia", "Austria", "Belgium", "Brazil", "Canada", "China",
        "Mainland China", "Denmark", "EU", "European Union", "Europe", "Finland", "France", "Germany",
        "Hong Kong", "HK", "India", "Indonesia", "Ireland", "Italy", "Japan", "Korea", "South Korea",
        "Macau", "Macao", "Malaysia", "Mexico", "Netherlands", "New Zealand", "Norway", "Philippines",
        "Poland", "Portugal", "Singapore", "Spain", "Sweden", "Switzerland", "Taiwan", "Thailand",
        "UK", "United Kingdom", "Britain", "England", "Scotland", "US", "USA", "United States",
        "Vietnam", "EEA", "APAC", "EMEA", "LATAM", "North America", "South America", "Latin America",
        "Middle East", "Beijing", "Shanghai", "Shenzhen", "Guangzhou", "London", "Paris", "Berlin",
        "Tokyo", "Sydney", "Toronto", "New York", "California",
    )
)  # fmt: skip
PLACES_ZH: tuple[str, ...] = tuple(
    "中国大陆 中国内地 中国香港 中国澳门 中国台湾 香港特别行政区 内地 大陆 中国 香港 澳门 台湾 "
    "新加坡 马来西亚 日本 韩国 美国 加拿大 英国 法国 德国 "
    "意大利 西班牙 荷兰 瑞士 瑞典 澳大利亚 澳洲 新西兰 印度 泰国 越南 印尼 菲律宾 欧盟 欧洲 北美 南美 亚洲 "
    "亚太 非洲 中东 海外 境外 国外 国内 北京 上海 深圳 广州 杭州 成都 武汉 南京 天津 重庆 西安 苏州".split()
)
# Places named more than one way, each spelling -> the one name read for all (policies.question.scopes)
PLACE_ALIASES: dict[str, str] = {
    **dict.fromkeys(
        ("中国", "中国大陆", "中国内地", "内地", "大陆", "国内", "境内", "mainland china", "china"),
        "中国大陆",
    ),
    **dict.fromkeys(("us", "usa", "united states", "america", "美国"), "us"),
    **dict.fromkeys(("uk", "united kingdom", "britain", "英国"), "uk"),
    **dict.fromkeys(("eu", "european union", "欧盟"), "eu"),
    **dict.fromkeys(("hong kong", "hk", "香港", "中国香港", "香港特别行政区"), "hong kong"),
    **dict.fromkeys(("macau", "macao", "澳门", "中国澳门"), "macau"),
    **dict.fromkeys(("taiwan", "台湾", "中国台湾"), "taiwan"),
    **dict.fromkeys(("singapore", "新加坡"), "singapore"),
    **dict.fromkeys(("japan", "日本"), "japan"),
    **dict.fromkeys(("australia", "澳大利亚", "澳洲"), "australia"),
    **dict.fromkeys(("canada", "加拿大"), "canada"),
    **dict.fromkeys(("海外", "境外", "国外"), "海外"),
}
# Regions a page may name in place of a place they hold ("港澳台地区暂不支持配送" answers "能寄到香港吗"):
# the region's spelling -> the places (PLACE_ALIASES' names) it holds (policies.question.places.spellings)
PLACE_REGIONS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(
        ("港澳台", "港澳台地区", "hong kong, macau and taiwan"), ("hong kong", "macau", "taiwan")
    ),
    **dict.fromkeys(("港澳", "港澳地区", "hong kong and macau"), ("hong kong", "macau")),
    **dict.fromkeys(("欧盟", "eu", "european union", "欧洲", "europe"), (
        "austria", "belgium", "denmark", "finland", "france", "germany", "ireland", "italy",
        "netherlands", "poland", "portugal", "spain", "sweden",
    )),
    **dict.fromkeys(("北美", "north america"), ("us", "canada", "mexico")),
}  # fmt: skip
# Places a question names that say where it is asked from rather than a place a page must name
# ("国内", "海外"): never refused as absent (policies.question.places.absent_places)
PLACES_GENERIC: frozenset[str] = frozenset(
    "国内 境内 内地 大陆 海外 境外 国外 abroad overseas domestic".split()
)
# What scopes a statement (policies.question.scopes): a plan, tier or edition ("the Starter plan",
# "企业版", "专业版套餐"), a customer group ("business customers", "企业用户"), a model's variant
# ("C200 Pro").
PLAN_HEADS_EN: frozenset[str] = _words(
    "plan plans tier tiers edition editions subscription membership package bundle"
)
PLAN_HEADS_ZH: tuple[str, ...] = ("版", "套餐", "会员")
# Numbered things: a head word and its number name one thing of a series ("code 11", "Error 21",
# "step 3", "错误码21", "第3步"); two numbers of one head are two things, and the number is no value
# of them (policies.conflicts.numbered)
NUMBERED_HEADS_EN: frozenset[str] = _words(
    "code codes error errors step steps item items rule rules section sections clause clauses article "
    "articles chapter chapters level levels option options phase phases stage stages zone zones gate gates "
    "room rooms line lines route routes bus channel channels port ports slot slots lane lanes form forms "
    "case cases type types class classes grade grades tier tiers group groups unit units batch batches "
    "version versions release releases firmware model no number"
)
NUMBERED_HEADS_ZH: tuple[str, ...] = (
    "错误码",
    "错误代码",
    "故障码",
    "代码",
    "编号",
    "错误",
    "故障",
    "型号",
    "版本",
)
NUMBERED_AFTER_ZH: tuple[str, ...] = ("号", "步", "条", "项", "级", "类", "档", "区", "章", "节", "款")
# A duration's unit in minutes, so that two spellings of one span compare ("12 months" / "1 year",
# "two weeks" / "14 days"); working days are their own measure (policies.conflicts.meaning)
DURATION_UNIT_MINUTES: dict[str, int] = {
    "minute": 1, "minutes": 1, "min": 1, "mins": 1, "分钟": 1, "分": 1,
    "hour": 60, "hours": 60, "hr": 60, "hrs": 60, "小时": 60, "个小时": 60, "钟头": 60,
    "day": 1440, "days": 1440, "天": 1440, "日": 1440,
    "week": 10080, "weeks": 10080, "周": 10080, "个星期": 10080, "星期": 10080,
    "month": 43200, "months": 43200, "个月": 43200, "月": 43200,
    "year": 525600, "years": 525600, "年": 525600,
}  # fmt: skip
WORKDAY_UNITS: frozenset[str] = frozenset(
    {"businessday", "businessdays", "workingday", "workingdays", "工作日", "个工作日"}
)
# Tiers of one product or plan, written after its name ("Shield Basic", "Shield Plus"): two tiers are
# two subjects (policies.conflicts.numbered)
TIER_WORDS_EN: frozenset[str] = _words(
    "basic plus premium standard pro starter essential essentials advanced business enterprise family "
    "personal lite free max ultra deluxe gold silver platinum bronze"
)
GROUP_WORDS_EN: frozenset[str] = _words(
    "personal business enterprise education educational student students nonprofit non-profit team family "
    "individual corporate government new existing returning trial free paid premium"
)
GROUP_HEADS_EN: frozenset[str] = _words(
    "customer customers user users account accounts member members buyer buyers"
)
GROUP_WORDS_ZH: tuple[str, ...] = tuple(
    "个人 企业 学生 教育 商业 家庭 团队 机构 学校 政府 新 老 免费 付费 试用 普通 高级 境外 境内".split()
)
GROUP_HEADS_ZH: tuple[str, ...] = ("用户", "客户", "账户", "账号", "会员", "买家")
# A model's edition words after its number ("C200 Pro"), read by policies.question.slots.model_spans
MODEL_EDITION_WORDS: frozenset[str] = _words("pro plus max mini lite ultra se air neo")
# A date a rule takes effect from ("From 1 March 2026, ...", "自2026年3月1日起"): a statement dated so
# replaces what an undated or earlier-dated one says (policies.conflicts.screen).
EFFECTIVE_BEFORE_EN: tuple[str, ...] = (
    "from", "since", "as of", "starting", "starting on", "starting from", "beginning", "effective",
    "effective from", "effective on", "effective as of", "with effect from",
)  # fmt: skip
EFFECTIVE_BEFORE_ZH: tuple[str, ...] = ("自", "从", "自从", "于")
EFFECTIVE_AFTER_ZH: tuple[str, ...] = ("起", "开始", "生效", "以后", "之后")
# What kind of number a question asks for in so many words (policies.conflicts.attributes): a kind is
# compared across documents only when one of its patterns is in the question. Regular expressions,
# matched case-blind; a time word after "how many" / "几" / "多少" makes it a duration.
ATTRIBUTE_KIND_CUES: dict[str, tuple[str, ...]] = {
    "duration": (
        r"\bhow (?:long|soon)\b",
        r"\bhow many (?:business |working )?(?:days|hours|minutes|weeks|months|years)\b",
        r"多久",
        r"多长时间",
        r"多长",
        r"多少(?:个)?(?:天|小时|分钟|周|星期|月|年|工作日)",
        r"几(?:个)?(?:天|小时|分钟|周|星期|月|年|工作日)",
        r"期限",
        r"有效期",
    ),
    "amount": (
        r"\bhow much\b",
        r"\b(?:price|cost|costs|fee|fees|charge|charges)\b",
        r"多少钱",
        r"价格",
        r"费用",
        r"运费",
        r"收费",
        r"满多少",
        r"多少元",
    ),
    "count": (
        r"\bhow many\b(?! (?:business |working )?(?:days|hours|minutes|weeks|months|years)\b)",
        r"几(?:个|台|路|张|位|次|条|部|款)(?!月|小时|工作日|星期)",
        r"多少(?:个|台|路|张|位|次|条|部|款)(?!月|小时|工作日|星期)",
        r"\bcapacity\b",
        r"容量",
    ),
    "percentage": (r"\bwhat percent(?:age)?\b", r"百分之几", r"多少%", r"比例", r"折扣", r"几折"),
    "hours": (
        r"几点",
        r"什么时间",
        r"服务时间",
        r"营业时间",
        r"工作时间",
        r"\bwhat time\b",
        r"\b(?:opening|business|support|service) hours\b",
        r"\bwhat hours\b",
        r"(?:上午|下午|晚上|早上|凌晨|中午|傍晚)[0-9一二三四五六七八九十]+点",  # a time of day named
        r"\b[0-9]{1,2}(?::[0-9]{2})?\s*(?:am|pm)\b",
        r"\bwhen (?:can|do|does|are|is) .*\b(?:open|call|reach|available)\b",
    ),
}
# Words two statements may share without speaking of one attribute ("after 7 days", "7天后", "within").
ATTRIBUTE_GLUE_WORDS: frozenset[str] = _words(
    "after before within about around up over under less more than "
    "后 前 内 以内 之内 约 大约 个 共 最多 最少 不超过"
)
# A document's scope sentence near its top ("This article applies to ...", "本条款适用于…"), read as
# what its page is about (policies.question.scopes.scope_statement); a place "outside" it, or "以外",
# is its complement (another scope: accounts registered outside mainland China).
SCOPE_STATEMENT_CUES: tuple[str, ...] = (
    "applies to", "apply to", "applies only to", "apply only to", "only for",
    "适用于", "适用范围", "仅适用", "仅限",
)  # fmt: skip
OUTSIDE_BEFORE_EN: tuple[str, ...] = ("outside of", "outside", "non-", "except in", "other than")
OUTSIDE_AFTER_ZH: tuple[str, ...] = ("以外", "之外", "以外的", "除外")

# ---- what a question names, read against the corpus (policies.question.named)
# Tokens mixing letters and digits that name no product: standards, resolutions, network generations,
# security words, counts of hours or steps (compact form: NFKC, lower case, no spaces).
EVERYDAY_CODES: frozenset[str] = _words(
    "2fa 3fa 4k 8k 2k 5k 3g 4g 5g 6g 1080p 720p 480p 1440p 2160p 4320p 1080i 24h 48h 72h 12h 24/7 7x24 "
    "3d 2d 4d 3-step 2-step 2-factor 3-factor 1-click 2x 3x 4x 10x 1x mp3 mp4 m4a h.264 h.265 h264 h265 "
    "a4 a3 a5 b2b b2c c2c p2p o2o covid-19 ipv4 ipv6 wpa2 wpa3 wpa wi-fi6 wi-fi6e wi-fi7 wifi6 wifi6e "
    "wifi7 802.11ac 802.11ax 802.11n 5ghz 2.4ghz 4g-lte 5g-nr ddr4 ddr5 hdr10 hdr10+ dolby-atmos e2e "
    "usb-c usb-a usb-b type-c 3.5mm"
)
# Names a version number follows without naming a product: "Wi-Fi 6", "USB 3.0", "Android 12".
EVERYDAY_CODE_NAMES: frozenset[str] = _words(
    "wi-fi wifi fi usb hdmi bluetooth ipv wpa ddr pcie lte android ios ipados macos windows "
    "step steps tier level stage option"
)
# Words that carry no request in either language: hedges, politeness, time fillers ("大概", "的话",
# "以后", "please", "actually"); as the index tokenizes them (English stemmed).
FILLERS: frozenset[str] = _words(
    "大概 大约 大致 大概率 左右 差不多 的话 以后 之后 然后 还有 就是 那个 这个 那么 请问 麻烦 劳驾 谢谢 "
    "多谢 你好 您好 亲 在吗 一下 帮忙 帮我 想 想问 想知道 问下 问问 知道 了解 咨询 下 请 一般 通常 "
    "目前 现在 最近 现在的 其实 到底 究竟 具体 具体点 哈 哦 嗯 呀 啦 哎 诶 好 好的 可能 应该 "
    "pleas thank thanks hi hello hey realli actual mayb probabl rough approxim anyway btw "
    "guy wonder quick curious"
)
# A clause that asks: its opening word in English, a word anywhere in Chinese.
ASKING_OPENINGS_EN: tuple[str, ...] = tuple(
    "how what which who whom whose when where why can could would should is are do does did will may "
    "am was were has have if any".split()
)
ASKING_WORDS_IN_CLAUSE_ZH: tuple[str, ...] = tuple(
    "吗 呢 么 多少 多久 多长 怎么 怎样 如何 什么 哪 几 是否 能否 能不能 可不可以 有没有 是不是 会不会 "
    "要不要 咋 啥 谁".split()
)
# The measure a question asks for, by its cue words (policies.question.analysis.measured_kinds): a
# price for "how much does it cost", a duration for "how long", a count for "how many". Checked in
# this order; the first kind whose cue the question holds is the measure asked.
MEASURE_CUES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "amount",
        (
            r"\bhow much (?:\w+ ){0,4}(?:cost|charge|pay|fee|price)", r"\b(?:cost|price|fee|charge)s?\b",
            r"\bhow much is\b", "多少钱", "费用", "价格", "收费", "多少元", "几块", "运费", "钱",
        ),
    ),
    (
        "duration",
        (
            r"\bhow long\b", r"\bhow many (?:days|hours|weeks|months|years|minutes|seconds)\b",
            r"\bhow (?:soon|fast|quickly)\b", "多久", "多长时间", "几天", "几个小时", "多少天", "几年",
            "几个月", "几分钟", "多少小时", "几小时",
        ),
    ),
    (
        "count",
        (
            r"\bhow many\b", r"\bhow (?:high|tall|far|big|heavy|wide|deep|loud)\b", r"\bweigh",
            r"\bdimensions?\b", "几个", "多少个", "几种", "几路", "几台", "多高", "多远", "多大", "多重",
            "多宽", "重量", "尺寸", "多少",
        ),
    ),
)  # fmt: skip
# Words that make a model another model ("C200 Pro", "D50 Max"): a question's model slot takes them
MODEL_VARIANTS: frozenset[str] = _words("pro max plus ultra mini lite se air neo prime premium edge xl")
# What a referenced document is called at the end of its name ("the Price List", "《维修收费标准》"): a
# reference to one may be what the answer defers to (policies.evidence.references.names_a_document)
DOCUMENT_NOUNS_EN: frozenset[str] = _words(
    "list table schedule form guide terms sheet policy agreement manual chart catalog catalogue notice "
    "conditions document handbook rules regulations tariff"
)
DOCUMENT_NOUNS_ZH: tuple[str, ...] = tuple(
    "标准 规则 规定 办法 政策 制度 条款 协议 细则 章程 须知 说明 手册 指南 清单 价目表 表".split()
)
# A price asked, as the words right before a duration that is then the period of a rate, not a slot
# ("多少钱一个月", "how much for one month": "¥45/月" answers it; policies.question.named.rate_period)
PRICE_ASKS_BEFORE_PERIOD: tuple[str, ...] = (
    "多少钱", "多少", "几块钱", "几块", "几元", "价格", "费用", "收费", "月费", "年费",
    r"\bhow much(?: is it| does it cost)?(?: for| per| a)?", r"\bcosts?(?: for| per)?",
    r"\bprice(?: for| per)?",
)  # fmt: skip
# Physical measures a question may ask for, by their cue words, and the units a stated value of each
# carries: "how much does it weigh" is answered by "320 g", not by "6500 mAh".
PHYSICAL_MEASURES: dict[str, tuple[tuple[str, ...], str]] = {
    "weight": (
        (r"\bweigh", r"\bweight\b", r"\bhow heavy\b", "多重", "重量", "几斤", "多少克", "多少公斤"),
        r"(?:kg|g|grams?|lbs?|pounds?|oz|克|千克|公斤|斤)\b",
    ),
    "length": (
        (
            r"\bdimensions?\b",
            r"\bhow (?:tall|wide|deep|thick)\b",
            r"\bsize of\b",
            "尺寸",
            "多宽",
            "多厚",
            "长宽高",
        ),
        r"(?:mm|cm|m|inch(?:es)?|毫米|厘米|公分|米|英寸)(?![a-z])",
    ),
}
