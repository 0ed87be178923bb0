"""Meta: could every file be read, is every suppression still needed, is every schema valid?"""
