"""Writes tasks.json and the tool sets of the #49 evaluation.

The tasks are written by the toolstream developers for this evaluation
(not taken from any benchmark): 20 per tier, each with the tool the user's
request needs and the key arguments the user gave (scored "exact" when
every expected value is contained, case-insensitively, in the call's
argument of that name). Every task is `dev` or `heldout`: the levers and
defaults were chosen looking at `dev` only; `heldout` (8 per tier) is
reported apart.

    python corpus/eval/make_tasks.py
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def fn(name, desc, props, required):
    return {"type": "function", "function": {"name": name, "description": desc, "parameters": {
        "type": "object", "properties": props, "required": required}}}


S = {"type": "string"}
TOOLS = {
    "weather": [fn("get_weather", "Get the current weather for a city.", {
        "city": {"type": "string", "description": "City name, e.g. Berlin"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Temperature unit"}},
        ["city"])],
    "bash": [fn("Bash", "Run a shell command and return its output.", {
        "command": {"type": "string", "description": "The command to run"},
        "description": {"type": "string", "description": "What the command does, in a few words"}},
        ["command"])],
    "files": [
        fn("Read", "Read a text file and return its lines.", {
            "file_path": {"type": "string", "description": "Path of the file"},
            "limit": {"type": "integer", "description": "How many lines to read"}}, ["file_path"]),
        fn("Write", "Write text to a file, replacing it.", {
            "file_path": {"type": "string", "description": "Path of the file"},
            "content": {"type": "string", "description": "The text to write"}}, ["file_path", "content"]),
        fn("Edit", "Replace a string in a file.", {
            "file_path": {"type": "string", "description": "Path of the file"},
            "old_string": {"type": "string", "description": "Text to find"},
            "new_string": {"type": "string", "description": "Text to put instead"}},
            ["file_path", "old_string", "new_string"]),
    ],
    "calendar": [
        fn("create_event", "Add an event to the calendar.", {
            "title": {"type": "string", "description": "Event title"},
            "date": {"type": "string", "description": "Day of the event, YYYY-MM-DD"},
            "time": {"type": "string", "description": "Start time, HH:MM"}}, ["title", "date"]),
        fn("list_events", "List the calendar events of a day.", {
            "date": {"type": "string", "description": "The day, YYYY-MM-DD"}}, ["date"]),
    ],
}

# (tools, user request, expected tool, key arguments)
SIMPLE = [
    ("weather", "What's the weather in Paris?", "get_weather", {"city": "Paris"}),
    ("weather", "How warm is it in Tokyo right now?", "get_weather", {"city": "Tokyo"}),
    ("weather", "Is it raining in London?", "get_weather", {"city": "London"}),
    ("weather", "Tell me the weather in Berlin in celsius.", "get_weather", {"city": "Berlin"}),
    ("weather", "Weather for Madrid please.", "get_weather", {"city": "Madrid"}),
    ("weather", "What is the temperature in Chicago in fahrenheit?", "get_weather", {"city": "Chicago"}),
    ("weather", "Check the weather in Rome.", "get_weather", {"city": "Rome"}),
    ("weather", "Do I need a coat in Oslo today?", "get_weather", {"city": "Oslo"}),
    ("weather", "Get the current weather for Sydney.", "get_weather", {"city": "Sydney"}),
    ("weather", "How is the weather in Cairo?", "get_weather", {"city": "Cairo"}),
    ("bash", "Show the git status of the repository.", "Bash", {"command": "git status"}),
    ("bash", "List the files in the current directory.", "Bash", {"command": "ls"}),
    ("bash", "Print the current working directory.", "Bash", {"command": "pwd"}),
    ("bash", "Show the last 5 git commits with git log.", "Bash", {"command": "git log"}),
    ("bash", "Count the lines in main.py with wc.", "Bash", {"command": "wc"}),
    ("bash", "Show the disk usage of this folder with du.", "Bash", {"command": "du"}),
    ("bash", "Print the contents of notes.txt using cat.", "Bash", {"command": "cat notes.txt"}),
    ("bash", "Run the tests with pytest.", "Bash", {"command": "pytest"}),
    ("bash", "Show the git diff.", "Bash", {"command": "git diff"}),
    ("bash", "Make a directory called build with mkdir.", "Bash", {"command": "mkdir build"}),
]
MEDIUM = [
    ("files", "Read the file notes.txt.", "Read", {"file_path": "notes.txt"}),
    ("files", "Show me what is in config.yaml.", "Read", {"file_path": "config.yaml"}),
    ("files", "Open README.md and read it.", "Read", {"file_path": "README.md"}),
    ("files", "Write 'hello world' to hello.txt.", "Write", {"file_path": "hello.txt", "content": "hello world"}),
    ("files", "Create a file todo.md containing 'buy milk'.", "Write", {"file_path": "todo.md", "content": "buy milk"}),
    ("files", "Save the text 'done' into status.txt.", "Write", {"file_path": "status.txt", "content": "done"}),
    ("files", "In main.py, replace 'foo' with 'bar'.", "Edit", {"file_path": "main.py", "old_string": "foo", "new_string": "bar"}),
    ("files", "Edit app.js: change 'var' to 'let'.", "Edit", {"file_path": "app.js", "old_string": "var", "new_string": "let"}),
    ("files", "Read the first 10 lines of server.log.", "Read", {"file_path": "server.log"}),
    ("files", "In setup.cfg replace 'debug' with 'release'.", "Edit", {"file_path": "setup.cfg", "old_string": "debug", "new_string": "release"}),
    ("calendar", "Add a meeting called Standup on 2025-03-10.", "create_event", {"title": "Standup", "date": "2025-03-10"}),
    ("calendar", "What events do I have on 2025-04-01?", "list_events", {"date": "2025-04-01"}),
    ("calendar", "Schedule 'Dentist' on 2025-05-20 at 09:30.", "create_event", {"title": "Dentist", "date": "2025-05-20"}),
    ("calendar", "List my events for 2025-06-15.", "list_events", {"date": "2025-06-15"}),
    ("calendar", "Create an event Lunch with Ana on 2025-07-04.", "create_event", {"title": "Lunch", "date": "2025-07-04"}),
    ("calendar", "Show the calendar for 2025-08-08.", "list_events", {"date": "2025-08-08"}),
    ("calendar", "Put 'Team review' in my calendar for 2025-09-12 at 14:00.", "create_event", {"title": "Team review", "date": "2025-09-12"}),
    ("calendar", "Which events are on 2025-10-31?", "list_events", {"date": "2025-10-31"}),
    ("calendar", "Book 'Gym' on 2025-11-02.", "create_event", {"title": "Gym", "date": "2025-11-02"}),
    ("calendar", "Do I have anything on 2025-12-24?", "list_events", {"date": "2025-12-24"}),
]
COMPLEX = [
    # The 24 tools Claude Code 2.x sends (corpus/tools/claude_code.json, Anthropic form).
    ("claude_code", "Show the git diff.", "Bash", {"command": "git diff"}),
    ("claude_code", "Run ls -la in the project.", "Bash", {"command": "ls"}),
    ("claude_code", "Run the test suite with cargo test.", "Bash", {"command": "cargo test"}),
    ("claude_code", "Read the file /home/user/project/src/main.rs.", "Read", {"file_path": "main.rs"}),
    ("claude_code", "Open /etc/hosts and show it.", "Read", {"file_path": "/etc/hosts"}),
    ("claude_code", "Write 'print(1)' to /tmp/a.py.", "Write", {"file_path": "/tmp/a.py", "content": "print(1)"}),
    ("claude_code", "Create the file /tmp/notes.md with the text 'draft'.", "Write", {"file_path": "/tmp/notes.md", "content": "draft"}),
    ("claude_code", "In /src/lib.rs replace 'old_name' with 'new_name'.", "Edit", {"file_path": "/src/lib.rs", "old_string": "old_name", "new_string": "new_name"}),
    ("claude_code", "Search the web for rust async tutorials.", "WebSearch", {"query": "rust async"}),
    ("claude_code", "Look up the latest Python release on the web.", "WebSearch", {"query": "python"}),
    ("claude_code", "Fetch https://example.com and summarize it.", "WebFetch", {"url": "https://example.com"}),
    ("claude_code", "Get the page https://docs.rs and list its sections.", "WebFetch", {"url": "https://docs.rs"}),
    ("claude_code", "Show the current git branch.", "Bash", {"command": "git branch"}),
    ("claude_code", "Read /var/log/syslog.", "Read", {"file_path": "/var/log/syslog"}),
    ("claude_code", "Search the web for llama.cpp grammar docs.", "WebSearch", {"query": "grammar"}),
    ("claude_code", "Install the requests package with pip install requests.", "Bash", {"command": "pip install requests"}),
    ("claude_code", "Read the file package.json.", "Read", {"file_path": "package.json"}),
    ("claude_code", "Write 'TODO' into /tmp/todo.txt.", "Write", {"file_path": "/tmp/todo.txt", "content": "TODO"}),
    ("claude_code", "Fetch https://www.rust-lang.org and tell me the version.", "WebFetch", {"url": "https://www.rust-lang.org"}),
    ("claude_code", "In /app/config.py replace 'DEBUG = True' with 'DEBUG = False'.", "Edit", {"file_path": "/app/config.py", "old_string": "DEBUG = True", "new_string": "DEBUG = False"}),
]


def main():
    tasks = []
    for tier, rows in (("simple", SIMPLE), ("medium", MEDIUM), ("complex", COMPLEX)):
        for i, (tools, user, tool, expect) in enumerate(rows):
            tasks.append({"id": f"{tier}-{i:02d}", "tier": tier, "split": "heldout" if i % 5 in (1, 3) else "dev",
                          "tools": "../tools/claude_code.json" if tools == "claude_code" else f"tools/{tools}.json", "user": user, "tool": tool, "expect": expect})
    os.makedirs(os.path.join(HERE, "tools"), exist_ok=True)
    for name, t in TOOLS.items():
        json.dump(t, open(os.path.join(HERE, "tools", f"{name}.json"), "w"), indent=1)
    with open(os.path.join(HERE, "tasks.json"), "w") as f:
        f.write("[\n" + ",\n".join(json.dumps(t, ensure_ascii=False) for t in tasks) + "\n]\n")
    print(len(tasks), "tasks;", sum(t["split"] == "heldout" for t in tasks), "held out")


if __name__ == "__main__":
    main()
