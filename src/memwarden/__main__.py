from memwarden.entry import run

run()
