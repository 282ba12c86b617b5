/// The calendar check of a date stored as text (RFC 3339 §5.6, the ISO 8601
/// profile the credential store writes).
///
/// Foundation's ISO 8601 parsing rolls an impossible date over rather than
/// refusing it: `2026-02-30` read as 2 March, `T25:00` as one in the morning
/// of the next day. Such a date only comes from a hand edit, and a typo in an
/// expiry would then silently move it (and be written back so). This names
/// the part that is out of range instead.
enum StoredDate {
    /// Why `text` is no date the calendar has, or `nil` when its fields are
    /// in range (or it is not `YYYY-MM-DDTHH:MM:SS…` at all: the parser's
    /// own error says so).
    static func problem(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19)
        else { return nil }
        guard (1...12).contains(month) else { return "has month \(month); months run 1–12" }
        let days = daysIn(month: month, year: year)
        guard (1...days).contains(day) else { return "has day \(day) of a month with \(days) days" }
        guard hour <= 23 else { return "has hour \(hour); hours run 0–23" }
        guard minute <= 59 else { return "has minute \(minute); minutes run 0–59" }
        guard second <= 59 else { return "has second \(second); seconds run 0–59" }
        // A numeric offset after the time (and any fraction): ±HH:MM.
        var index = 19
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-"),
            let offsetHours = number(index + 1..<index + 3), let offsetMinutes = number(index + 4..<index + 6),
            offsetHours > 23 || offsetMinutes > 59
        {
            return
                "has the offset \(DisplayText.sanitized(String(text[text.utf8.index(text.startIndex, offsetBy: index)...]), limit: 20)); an offset runs up to ±23:59"
        }
        return nil
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
